package rundir

import (
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// Cell is one sweep cell as the run directory records it: every row of
// items and attempts carries its id in `cell` and each swept variable's
// value in a column named after the variable.
type Cell struct {
	ID   string
	Vars []CellVar
}

// CellVar is one swept variable's value in a cell (a string, int64,
// float64 or bool; other values as their JSON text).
type CellVar struct {
	Name  string
	Value table.Value
}

// cellColumns returns the `cell` column and one column per swept variable,
// typed by the values the sweep gives it. A variable named like one of
// evalflow's own columns is written as var_<name>; a dataset field named
// like a swept variable becomes data_<name> (SetPassColumns).
func cellColumns(cells []Cell, metricCols []string) sinks.Schema {
	if len(cells) == 0 {
		return nil
	}
	s := sinks.Schema{{Name: "cell", Type: table.TypeString, Doc: "sweep cell: the swept variables' values, name=value joined by commas"}}
	fixed := map[string]bool{"cell": true}
	for _, c := range ItemSchema(nil, metricCols) {
		fixed[c.Name] = true
	}
	for _, c := range AttemptSchema {
		fixed[c.Name] = true
	}
	for i, v := range cells[0].Vars {
		t := typeOf(v.Value)
		for _, c := range cells[1:] {
			if i < len(c.Vars) && typeOf(c.Vars[i].Value) != t {
				if isNum(t) && isNum(typeOf(c.Vars[i].Value)) {
					t = table.TypeFloat
				} else {
					t = table.TypeString
				}
			}
		}
		name := v.Name
		if fixed[name] {
			name = "var_" + name
		}
		s = append(s, sinks.Column{Name: name, Type: t, Doc: "swept variable " + v.Name})
	}
	return s
}

func isNum(t table.Type) bool { return t == table.TypeInt || t == table.TypeFloat }

// withCells inserts the cell columns after seq.
func withCells(s, cellCols sinks.Schema) sinks.Schema {
	if len(cellCols) == 0 {
		return s
	}
	out := append(sinks.Schema{s[0]}, cellCols...)
	return append(out, s[1:]...)
}

// cellRow inserts a record's cell values after seq.
func (r *Run) cellRow(rec *item.Record, row []any) []any {
	if len(r.cellCols) == 0 {
		return row
	}
	out := make([]any, 0, len(row)+len(r.cellCols))
	out = append(out, row[0])
	if rec.Cell < 0 || rec.Cell >= len(r.cfg.Cells) {
		for range r.cellCols {
			out = append(out, nil)
		}
	} else {
		c := r.cfg.Cells[rec.Cell]
		out = append(out, c.ID)
		for i, col := range r.cellCols[1:] {
			var v table.Value
			if i < len(c.Vars) {
				v = c.Vars[i].Value
			}
			out = append(out, coerce(v, col.Type))
		}
	}
	return append(out, row[1:]...)
}

// cellIndex maps a cell id back to its index (for rows of earlier
// generations); -1 when unknown.
func (r *Run) cellIndex(id string) int {
	for i, c := range r.cfg.Cells {
		if c.ID == id {
			return i
		}
	}
	return -1
}

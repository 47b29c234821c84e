package suite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// GenOptions shape the random databases.
type GenOptions struct {
	// MaxRows is the most rows a generated table gets (at least 1 unless
	// Empty); 0 means DefaultMaxRows.
	MaxRows int
	// Nulls lets nullable columns (not NOT NULL, not in a key) hold NULL,
	// one value in eight.
	Nulls bool
	// Empty lets a table be generated without rows, one time in eight.
	Empty bool
}

// DefaultMaxRows is the default of GenOptions.MaxRows: small tables make
// duplicates and ties likely, which is what separates near-miss queries.
const DefaultMaxRows = 8

// maxOriginalValues bounds the values read from each column of the
// original database into its pool.
const maxOriginalValues = 40

// pools holds the candidate values of every column. Columns compared with
// each other in a gold query, or linked by a foreign key, share one pool.
type pools struct {
	group  map[colRef]colRef // column → representative of its pool
	consts map[colRef][]any  // representative → gold constants and their ±1/±ε neighbours
	orig   map[colRef][]any  // representative → values from the original database
}

func (p *pools) find(c colRef) colRef {
	for {
		r, ok := p.group[c]
		if !ok || r == c {
			return c
		}
		c = r
	}
}

func (p *pools) union(a, b colRef) {
	ra, rb := p.find(a), p.find(b)
	if ra == rb {
		return
	}
	if rb.table+"."+rb.column < ra.table+"."+ra.column {
		ra, rb = rb, ra
	}
	p.group[rb] = ra
}

func lowerRef(t, c string) colRef { return colRef{strings.ToLower(t), strings.ToLower(c)} }

// buildPools seeds the pools from the original database and every gold's
// constants.
func buildPools(ctx context.Context, db *sql.DB, s *Schema, facts []*queryFacts) (*pools, error) {
	p := &pools{group: map[colRef]colRef{}, consts: map[colRef][]any{}, orig: map[colRef][]any{}}
	for _, t := range s.Tables {
		for _, fk := range t.ForeignKeys {
			for i := range fk.Columns {
				p.union(lowerRef(t.Name, fk.Columns[i]), lowerRef(fk.RefTable, fk.RefColumns[i]))
			}
		}
	}
	for _, f := range facts {
		for _, e := range f.equal {
			a, b := lowerRef(e[0].table, e[0].column), lowerRef(e[1].table, e[1].column)
			ka, kb := s.Table(a.table).Column(a.column).Kind, s.Table(b.table).Column(b.column).Kind
			if ka == kb {
				p.union(a, b)
			}
		}
	}
	for _, f := range facts {
		for c, vs := range f.constants {
			r := p.find(lowerRef(c.table, c.column))
			k := s.Table(c.table).Column(c.column).Kind
			for _, v := range vs {
				p.consts[r] = append(p.consts[r], withNeighbours(v, k)...)
			}
		}
		for _, t := range s.Tables {
			for _, c := range t.Columns {
				for _, v := range f.loose {
					if kindMatches(v, c.Kind) {
						r := p.find(lowerRef(t.Name, c.Name))
						p.consts[r] = append(p.consts[r], withNeighbours(v, c.Kind)...)
					}
				}
			}
		}
	}
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			q := fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL ORDER BY 1 LIMIT %d",
				quoteIdent(c.Name), quoteIdent(t.Name), quoteIdent(c.Name), maxOriginalValues)
			r := p.find(lowerRef(t.Name, c.Name))
			err := queryEach(ctx, db, q, nil, func(rows *sql.Rows) error {
				var v any
				if err := rows.Scan(&v); err != nil {
					return err
				}
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				p.orig[r] = append(p.orig[r], v)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("reading %s.%s: %w", t.Name, c.Name, err)
			}
		}
	}
	for r := range p.consts {
		p.consts[r] = dedupe(p.consts[r])
	}
	for r := range p.orig {
		p.orig[r] = dedupe(p.orig[r])
	}
	return p, nil
}

func kindMatches(v any, k Kind) bool {
	switch v.(type) {
	case string:
		return k == KindText
	case int64:
		return k != KindText
	case float64:
		return k == KindFloat
	}
	return false
}

// withNeighbours returns v, converted to the column's kind where it can
// be, and its boundary neighbours (±1 for integers, ±epsilon for floats).
func withNeighbours(v any, k Kind) []any {
	switch x := v.(type) {
	case int64:
		if k == KindFloat {
			f := float64(x)
			return []any{f, f - epsilon(f), f + epsilon(f)}
		}
		return []any{x, x - 1, x + 1}
	case float64:
		if k == KindInt {
			return []any{int64(x), int64(x) + 1, int64(x) - 1}
		}
		return []any{x, x - epsilon(x), x + epsilon(x)}
	case string:
		if k == KindInt {
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return []any{n, n - 1, n + 1}
			}
		}
		return []any{x}
	}
	return []any{v}
}

func dedupe(vs []any) []any {
	seen := map[string]bool{}
	out := vs[:0]
	for _, v := range vs {
		k := fmt.Sprintf("%T:%v", v, v)
		if !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

// genDB is one generated database: per table (in schema order) its rows.
type genDB struct {
	rows map[string][][]any
}

// generate draws one random database for s. Parents are filled before
// children; a foreign key copies the referenced values of a random parent
// row; PRIMARY KEY and UNIQUE tuples are never repeated (a row that keeps
// colliding after a few draws is left out); NOT NULL columns never get
// NULL. Each column draws from a small random subset of its pool, so
// duplicates are likely. A column whose pool has focus values (the
// constants of the golds a sample aims at, with their ±1/±ε neighbours)
// draws from all of them and at most two other values of its pool, so
// those constants, their duplicates and both sides of their boundaries are
// all but certain to appear; its tables get up to twice MaxRows rows.
func generate(s *Schema, p *pools, o GenOptions, rng *rand.Rand, focus map[colRef][]any) *genDB {
	maxRows := o.MaxRows
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	if len(focus) > 0 {
		maxRows *= 2 // room for the duplicates of several golds' constants
	}
	sub := map[colRef][]any{}
	subset := func(t *Table, c *Column) []any {
		r := p.find(lowerRef(t.Name, c.Name))
		if v, ok := sub[r]; ok {
			return v
		}
		var vs []any
		cs, os := p.consts[r], p.orig[r]
		if fc := focus[r]; len(fc) > 0 {
			vs = append(vs, fc...)
			all := append(append([]any(nil), cs...), os...)
			if len(all) > 0 {
				for range rng.IntN(3) {
					vs = append(vs, all[rng.IntN(len(all))])
				}
			}
			vs = dedupe(vs)
			sub[r] = vs
			return vs
		}
		if len(cs) > 0 {
			n := 1 + rng.IntN(min(len(cs), 6))
			for _, i := range rng.Perm(len(cs))[:n] {
				vs = append(vs, cs[i])
			}
		}
		if len(os) > 0 {
			n := 1 + rng.IntN(min(len(os), 4))
			for _, i := range rng.Perm(len(os))[:n] {
				vs = append(vs, os[i])
			}
		}
		if len(vs) == 0 {
			vs = syntheticValues(c.Kind, rng)
		}
		sub[r] = vs
		return vs
	}
	g := &genDB{rows: map[string][][]any{}}
	for _, t := range s.Tables {
		n := 1 + rng.IntN(maxRows)
		if o.Empty && rng.IntN(8) == 0 {
			n = 0
		}
		keys := append([][]string(nil), t.Unique...)
		if len(t.PrimaryKey) > 0 {
			keys = append(keys, t.PrimaryKey)
		}
		seen := make([]map[string]bool, len(keys))
		for i := range seen {
			seen[i] = map[string]bool{}
		}
		colIdx := map[string]int{}
		for i, c := range t.Columns {
			colIdx[strings.ToLower(c.Name)] = i
		}
		inKey := map[int]bool{}
		for _, k := range keys {
			for _, c := range k {
				inKey[colIdx[strings.ToLower(c)]] = true
			}
		}
		var rows [][]any
	row:
		for len(rows) < n {
			for attempt := 0; ; attempt++ {
				if attempt == 8 {
					n-- // keeps colliding: one row fewer
					continue row
				}
				r := make([]any, len(t.Columns))
				for i, c := range t.Columns {
					if o.Nulls && !c.NotNull && !inKey[i] && rng.IntN(8) == 0 {
						continue
					}
					vs := subset(t, c)
					r[i] = vs[rng.IntN(len(vs))]
				}
				ok := true
				for _, fk := range t.ForeignKeys {
					parent := g.rows[strings.ToLower(fk.RefTable)]
					pt := s.Table(fk.RefTable)
					if len(parent) == 0 || pt == nil {
						for _, c := range fk.Columns {
							i := colIdx[strings.ToLower(c)]
							if t.Columns[i].NotNull {
								ok = false
							}
							r[i] = nil
						}
						continue
					}
					pr := parent[rng.IntN(len(parent))]
					for j, c := range fk.Columns {
						pi := -1
						for k, pc := range pt.Columns {
							if strings.EqualFold(pc.Name, fk.RefColumns[j]) {
								pi = k
							}
						}
						if pi >= 0 {
							r[colIdx[strings.ToLower(c)]] = pr[pi]
						}
					}
				}
				if !ok {
					n--
					continue row
				}
				keyStrs := make([]string, len(keys))
				for ki, k := range keys {
					var b strings.Builder
					hasNull := false
					for _, c := range k {
						v := r[colIdx[strings.ToLower(c)]]
						if v == nil {
							hasNull = true
						}
						fmt.Fprintf(&b, "%T:%v\x1f", v, v)
					}
					keyStrs[ki] = b.String()
					if hasNull && ki < len(t.Unique) { // UNIQUE allows several NULLs
						keyStrs[ki] = ""
					}
					if keyStrs[ki] != "" && seen[ki][keyStrs[ki]] {
						ok = false
					}
				}
				if !ok {
					continue
				}
				for ki, k := range keyStrs {
					if k != "" {
						seen[ki][k] = true
					}
				}
				rows = append(rows, r)
				break
			}
		}
		g.rows[strings.ToLower(t.Name)] = rows
	}
	return g
}

// focusValues returns, per pool, the constants the given golds compare its
// columns with, and their ±1/±ε neighbours (generate's focus).
func focusValues(p *pools, s *Schema, facts []*queryFacts) map[colRef][]any {
	out := map[colRef][]any{}
	for _, f := range facts {
		if f == nil {
			continue
		}
		refs := make([]colRef, 0, len(f.constants))
		for c := range f.constants {
			refs = append(refs, c)
		}
		sort.Slice(refs, func(i, j int) bool {
			return refs[i].table+"."+refs[i].column < refs[j].table+"."+refs[j].column
		})
		for _, c := range refs {
			r := p.find(lowerRef(c.table, c.column))
			k := s.Table(c.table).Column(c.column).Kind
			for _, v := range f.constants[c] {
				out[r] = append(out[r], withNeighbours(v, k)...)
			}
		}
	}
	for r := range out {
		out[r] = dedupe(out[r])
	}
	return out
}

// dropRow removes one random row of one of the named tables that has more
// than one row (to break a tie under ORDER BY); it reports whether it
// removed one. Rows of other tables that referenced it are refused by the
// engine when the foreign keys are enforced.
func (g *genDB) dropRow(tables []string, rng *rand.Rand) bool {
	var cands []string
	for _, t := range tables {
		if len(g.rows[strings.ToLower(t)]) > 1 {
			cands = append(cands, strings.ToLower(t))
		}
	}
	if len(cands) == 0 {
		return false
	}
	t := cands[rng.IntN(len(cands))]
	rows := g.rows[t]
	i := rng.IntN(len(rows))
	g.rows[t] = append(append([][]any(nil), rows[:i]...), rows[i+1:]...)
	return true
}

// syntheticValues invents a few values for a column with an empty pool.
func syntheticValues(k Kind, rng *rand.Rand) []any {
	var vs []any
	for i := 0; i < 3; i++ {
		switch k {
		case KindInt:
			vs = append(vs, int64(rng.IntN(10)))
		case KindFloat:
			vs = append(vs, float64(rng.IntN(100))/10)
		default:
			vs = append(vs, fmt.Sprintf("v%d", rng.IntN(10)))
		}
	}
	return vs
}

// write creates the tables of s in the empty database db and inserts g, in
// one transaction, parents first. It returns the rows the engine refused
// (a CHECK constraint the schema reader does not model), which are left out.
func (g *genDB) write(ctx context.Context, db *sql.DB, s *Schema) (refused int, err error) {
	for _, ddl := range s.DDL {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return 0, fmt.Errorf("creating schema: %w", err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	names := make([]string, 0, len(s.Tables))
	for _, t := range s.Tables {
		names = append(names, t.Name)
	}
	for _, t := range s.Tables {
		rows := g.rows[strings.ToLower(t.Name)]
		if len(rows) == 0 {
			continue
		}
		cols := make([]string, len(t.Columns))
		marks := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = quoteIdent(c.Name)
			marks[i] = "?"
		}
		stmt, err := tx.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)",
			quoteIdent(t.Name), strings.Join(cols, ", "), strings.Join(marks, ", ")))
		if err != nil {
			return 0, err
		}
		kept := rows[:0]
		for _, r := range rows {
			if _, err := stmt.ExecContext(ctx, r...); err != nil {
				refused++
				continue
			}
			kept = append(kept, r)
		}
		stmt.Close()
		g.rows[strings.ToLower(t.Name)] = kept
	}
	sort.Strings(names)
	return refused, tx.Commit()
}

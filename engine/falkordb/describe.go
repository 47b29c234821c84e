package falkordb

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/cypher"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// writeOps are the execution-plan operations that change a graph.
var writeOps = map[string]bool{"Create": true, "Update": true, "Delete": true, "Merge": true, "MergeCreate": true}

// Prepare checks q.Text with GRAPH.EXPLAIN on graph q.DB without running
// it: parse errors, undefined variables and unsupported constructs are
// classified as Execute classifies them, and a plan that writes (Create,
// Update, Delete, Merge) is an item.ClassSafety error. Unknown labels,
// types and properties are not errors in FalkorDB.
func (e *Executor) Prepare(ctx context.Context, q engine.Query) error {
	if err := e.notReady(); err != nil {
		return err
	}
	if cypher.Empty(q.Text) {
		return errEmpty
	}
	if q.DB == "" {
		q.DB = e.graph
	}
	if q.DB == "" {
		return errNoGraph
	}
	timeout, _ := q.Limits(e.timeout, e.maxRows)
	qctx, cancel := context.WithTimeout(ctx, timeout+grace)
	defer cancel()
	res, err := e.client.Do(qctx, "GRAPH.EXPLAIN", q.DB, q.Text).Result()
	if err == nil {
		err = nestedError(res)
	}
	if err != nil {
		return classify(ctx, qctx, timeout, q.DB, q.Text, err)
	}
	lines, _ := res.([]any)
	for _, l := range lines {
		s, _ := l.(string)
		op, _, _ := strings.Cut(strings.TrimSpace(s), " |")
		if writeOps[op] {
			return &engine.Error{Class: item.ClassSafety, Msg: fmt.Sprintf("falkordb: the query writes (plan operation %s); only read-only queries are run", op)}
		}
	}
	return nil
}

// Describe returns graph db's schema as tables, in this mapping:
//
//   - each node label is a table named after the label (in db.labels()
//     order), whose columns are the properties found on up to
//     describe_sample nodes with that label, sorted by name;
//   - each relationship type follows as a table named after the type,
//     with the properties of up to describe_sample relationships as
//     columns, and one foreign key per endpoint label seen:
//     Columns ["(start)"] or ["(end)"], RefTable the label, no RefColumns.
//
// A column's DeclType is the property's type in Neo4j's spelling (STRING,
// INTEGER, FLOAT, BOOLEAN, LIST, MAP, POINT, DATE, LOCAL_DATE_TIME,
// LOCAL_TIME, DURATION, VECTOR), several joined by "|" in sorted order when
// the sample mixes them; Type is the table type for STRING, INTEGER, FLOAT
// and BOOLEAN and table.TypeAny otherwise. NotNull is set when every
// sampled node (relationship) has the property. No column is a primary
// key: FalkorDB has none.
func (e *Executor) Describe(ctx context.Context, db string) (*engine.Schema, error) {
	if err := e.notReady(); err != nil {
		return nil, err
	}
	if db == "" {
		db = e.graph
	}
	if db == "" {
		return nil, errNoGraph
	}
	ns, err := e.namesOf(ctx, db, true)
	if err != nil {
		return nil, err
	}
	s := &engine.Schema{}
	for _, l := range ns.labels {
		cols, err := e.properties(ctx, db, fmt.Sprintf("MATCH (x:%s) WITH x LIMIT %d RETURN [k IN keys(x) | [k, x[k]]]", quote(l), e.sample))
		if err != nil {
			return nil, err
		}
		s.Tables = append(s.Tables, engine.TableInfo{Name: l, Columns: cols})
	}
	for _, r := range ns.relTypes {
		cols, err := e.properties(ctx, db, fmt.Sprintf("MATCH ()-[x:%s]->() WITH x LIMIT %d RETURN [k IN keys(x) | [k, x[k]]]", quote(r), e.sample))
		if err != nil {
			return nil, err
		}
		fks, err := e.endpoints(ctx, db, r)
		if err != nil {
			return nil, err
		}
		s.Tables = append(s.Tables, engine.TableInfo{Name: r, Columns: cols, ForeignKeys: fks})
	}
	return s, nil
}

// quote returns name as a backtick-quoted Cypher identifier.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// properties runs a query whose rows are one list of [key, value] pairs
// per sampled entity and summarises keys and value types as columns.
func (e *Executor) properties(ctx context.Context, graph, text string) ([]engine.ColumnInfo, error) {
	raw, err := e.roQuery(ctx, graph, text, e.timeout)
	if err != nil {
		return nil, err
	}
	if len(raw) < 3 {
		return nil, badReply(fmt.Errorf("no result set for %s", text))
	}
	rows, err := asList(raw[1])
	if err != nil {
		return nil, badReply(err)
	}
	seen := map[string]int{}
	types := map[string]map[string]bool{}
	for _, r := range rows {
		cells, err := asList(r)
		if err != nil || len(cells) != 1 {
			return nil, badReply(fmt.Errorf("malformed row %#v", r))
		}
		pairs, err := typedList(cells[0])
		if err != nil {
			return nil, badReply(err)
		}
		for _, p := range pairs {
			kv, err := typedList(p)
			if err != nil || len(kv) != 2 {
				return nil, badReply(fmt.Errorf("malformed pair %#v", p))
			}
			k, err := decoder{&names{}}.value(kv[0])
			if err != nil {
				return nil, badReply(err)
			}
			key, _ := k.(string)
			vt, err := typeCode(kv[1])
			if err != nil {
				return nil, badReply(err)
			}
			seen[key]++
			if types[key] == nil {
				types[key] = map[string]bool{}
			}
			if vt != vtNull {
				types[key][typeNames[vt]] = true
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var cols []engine.ColumnInfo
	for _, k := range keys {
		ts := make([]string, 0, len(types[k]))
		for t := range types[k] {
			ts = append(ts, t)
		}
		sort.Strings(ts)
		c := engine.ColumnInfo{Name: k, DeclType: strings.Join(ts, "|"), NotNull: seen[k] == len(rows)}
		switch c.DeclType {
		case "STRING":
			c.Type = table.TypeString
		case "INTEGER":
			c.Type = table.TypeInt
		case "FLOAT":
			c.Type = table.TypeFloat
		case "BOOLEAN":
			c.Type = table.TypeBool
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// endpoints returns the labels seen at the start and end of up to
// describe_sample relationships of type rel, as foreign keys.
func (e *Executor) endpoints(ctx context.Context, graph, rel string) ([]engine.ForeignKey, error) {
	text := fmt.Sprintf("MATCH (a)-[x:%s]->(b) WITH a, b LIMIT %d UNWIND labels(a) AS s UNWIND labels(b) AS t RETURN DISTINCT s, t", quote(rel), e.sample)
	raw, err := e.roQuery(ctx, graph, text, e.timeout)
	if err != nil {
		return nil, err
	}
	if len(raw) < 3 {
		return nil, badReply(fmt.Errorf("no result set for %s", text))
	}
	t, err := decodeRows(decoder{&names{}}, []string{"s", "t"}, mustList(raw[1]), false)
	if err != nil {
		return nil, badReply(err)
	}
	var starts, ends []string
	add := func(list []string, v table.Value) []string {
		s, _ := v.(string)
		for _, x := range list {
			if x == s {
				return list
			}
		}
		return append(list, s)
	}
	for _, r := range t.Rows {
		starts = add(starts, r[0])
		ends = add(ends, r[1])
	}
	sort.Strings(starts)
	sort.Strings(ends)
	var fks []engine.ForeignKey
	for _, s := range starts {
		fks = append(fks, engine.ForeignKey{Columns: []string{"(start)"}, RefTable: s})
	}
	for _, s := range ends {
		fks = append(fks, engine.ForeignKey{Columns: []string{"(end)"}, RefTable: s})
	}
	return fks, nil
}

func mustList(v any) []any {
	l, _ := asList(v)
	return l
}

// typedList returns the items of a compact [ARRAY, items] value.
func typedList(raw any) ([]any, error) {
	pair, err := asList(raw)
	if err != nil || len(pair) != 2 {
		return nil, fmt.Errorf("malformed compact value %#v", raw)
	}
	if t, _ := pair[0].(int64); t != vtArray {
		return nil, fmt.Errorf("expected an array, got type %v", pair[0])
	}
	return asList(pair[1])
}

func typeCode(raw any) (int64, error) {
	pair, err := asList(raw)
	if err != nil || len(pair) != 2 {
		return 0, fmt.Errorf("malformed compact value %#v", raw)
	}
	t, ok := pair[0].(int64)
	if !ok {
		return 0, fmt.Errorf("malformed compact value type %#v", pair[0])
	}
	return t, nil
}

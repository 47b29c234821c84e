package rundir

import (
	"fmt"
	"slices"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// BenchmarkWrite measures what the run directory costs per item: one
// record with a typical gold and prediction result (12 rows × 3 columns)
// and one attempt written to the items and attempts parts, the final flush
// and merge included. items/s is the throughput.
//
//	go test -run '^$' -bench Write -benchmem ./rundir/
func BenchmarkWrite(b *testing.B) {
	res := &table.Table{Columns: []table.Column{{Name: "id", Type: table.TypeInt}, {Name: "name", Type: table.TypeString}, {Name: "score", Type: table.TypeFloat}}}
	for i := range 12 {
		res.Rows = append(res.Rows, []table.Value{int64(i), fmt.Sprintf("customer number %d of the shop", i), float64(i) / 3})
	}
	recs := make([]*item.Record, 1000)
	for i := range recs {
		r := record(i, fmt.Sprintf("q%d", i), i%2 == 0)
		r.GoldResult = res
		r.Samples[0].Attempts[0].Result = res
		recs[i] = r
	}
	// previews=off writes the columns items.parquet had before
	// gold_preview and pred_preview (as a resumed older run does): the
	// difference is what the previews cost.
	for _, previews := range []bool{false, true} {
		b.Run(fmt.Sprintf("previews=%v", previews), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				b.StopTimer()
				r, err := Create(b.TempDir(), []string{"ex", "pass_at_k"}, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				r.schemaFrom(recs[0])
				if !previews {
					s := slices.DeleteFunc(slices.Clone(r.itemSchema), func(c sinks.Column) bool {
						return c.Name == "gold_preview" || c.Name == "pred_preview"
					})
					r.setItemSchema(s)
				}
				b.StartTimer()
				for _, rec := range recs {
					if err := r.Write(rec); err != nil {
						b.Fatal(err)
					}
				}
				if err := r.Close(); err != nil {
					b.Fatal(err)
				}
				n += len(recs)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkPreview measures building one result preview (12 rows × 3
// columns, 5 rows kept).
func BenchmarkPreview(b *testing.B) {
	res := &table.Table{Columns: []table.Column{{Name: "id", Type: table.TypeInt}, {Name: "name", Type: table.TypeString}, {Name: "score", Type: table.TypeFloat}}}
	for i := range 12 {
		res.Rows = append(res.Rows, []table.Value{int64(i), fmt.Sprintf("customer number %d of the shop", i), float64(i) / 3})
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		previewOf(&buf, res)
	}
}

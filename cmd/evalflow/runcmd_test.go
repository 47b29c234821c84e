package main

import (
	"testing"

	"github.com/evalflow/evalflow/rundir"
)

func TestMaxCostMayDiffer(t *testing.T) {
	stopped := &rundir.Manifest{Status: "stopped", Fingerprint: rundir.Fingerprint{"var:max_cost": "5", "var:judge_max_cost": "1"}}
	for _, tt := range []struct {
		prev      *rundir.Manifest
		key, now  string
		mayDiffer bool
	}{
		{stopped, "var:max_cost", "10", true},
		{stopped, "var:max_cost", "5", false},
		{stopped, "var:max_cost", "2", false},
		{stopped, "var:judge_max_cost", "1.5", true},
		{stopped, "var:dataset", "x", false},
		{&rundir.Manifest{Status: "cancelled", Fingerprint: stopped.Fingerprint}, "var:max_cost", "10", false},
	} {
		if got := maxCostMayDiffer(tt.prev, tt.key, tt.now); got != tt.mayDiffer {
			t.Errorf("%s %s → %s: %v, want %v", tt.prev.Status, tt.key, tt.now, got, tt.mayDiffer)
		}
	}
}

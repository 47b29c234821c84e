package spider

// Hardness is Evaluator.eval_hardness on a parsed (not normalised) gold
// query: "easy", "medium", "hard" or "extra". It copies the reference's
// counting, quirks included: HAVING is not a component-1 item; a NOT
// condition in WHERE counts as an aggregate (has_agg reads the cond unit's
// first field, the NOT flag); the raw HAVING list is counted, so its
// and/or connectors count as aggregates too; len(where) includes the
// connectors. It fails where the reference raises (a connector where a
// condition is expected).
func Hardness(gold *SQL) (string, error) {
	for _, c := range []Condition{gold.FromConds, gold.Where, gold.Having} {
		for i := 0; i < len(c); i += 2 {
			if c[i].Unit == nil {
				return "", refErr("connector %q where a condition is expected", c[i].Conn)
			}
		}
	}
	c1, c2, o := component1(gold), len(nestedSQL(gold)), others(gold)
	switch {
	case c1 <= 1 && o == 0 && c2 == 0:
		return "easy", nil
	case (o <= 2 && c1 <= 1 && c2 == 0) || (c1 <= 2 && o < 2 && c2 == 0):
		return "medium", nil
	case (o > 2 && c1 <= 2 && c2 == 0) || (2 < c1 && c1 <= 3 && o <= 2 && c2 == 0) || (c1 <= 1 && o == 0 && c2 <= 1):
		return "hard", nil
	}
	return "extra", nil
}

func component1(s *SQL) int {
	n := 0
	if len(s.Where) > 0 {
		n++
	}
	if len(s.GroupBy) > 0 {
		n++
	}
	if s.OrderBy != nil {
		n++
	}
	if s.Limit != nil {
		n++
	}
	if len(s.TableUnits) > 0 {
		n += len(s.TableUnits) - 1
	}
	for _, c := range []Condition{s.FromConds, s.Where, s.Having} {
		for _, e := range units(c, true) {
			if e.Unit == nil && e.Conn == "or" {
				n++
			}
		}
	}
	for _, c := range []Condition{s.FromConds, s.Where, s.Having} {
		for _, e := range units(c, false) {
			if e.Unit.Op == opLike {
				n++
			}
		}
	}
	return n
}

func nestedSQL(s *SQL) []*SQL {
	var out []*SQL
	for _, c := range []Condition{s.FromConds, s.Where, s.Having} {
		for _, e := range units(c, false) {
			if e.Unit.V1.Kind == ValSQL {
				out = append(out, e.Unit.V1.SQL)
			}
			if e.Unit.V2.Kind == ValSQL {
				out = append(out, e.Unit.V2.SQL)
			}
		}
	}
	for _, sub := range []*SQL{s.Intersect, s.Except, s.Union} {
		if sub != nil {
			out = append(out, sub)
		}
	}
	return out
}

func others(s *SQL) int {
	agg := 0
	for _, it := range s.Select {
		if it.Agg != 0 {
			agg++
		}
	}
	for _, e := range units(s.Where, false) {
		if e.Unit.Not {
			agg++
		}
	}
	for _, cu := range s.GroupBy {
		if cu.Agg != 0 {
			agg++
		}
	}
	if s.OrderBy != nil {
		for _, vu := range s.OrderBy.Units {
			if vu.C1 != nil && vu.C1.Agg != 0 {
				agg++
			}
		}
		for _, vu := range s.OrderBy.Units {
			if vu.C2 != nil && vu.C2.Agg != 0 {
				agg++
			}
		}
	}
	for _, e := range s.Having {
		if e.Unit == nil || e.Unit.Not {
			agg++
		}
	}
	n := 0
	if agg > 1 {
		n++
	}
	if len(s.Select) > 1 {
		n++
	}
	if len(s.Where) > 1 {
		n++
	}
	if len(s.GroupBy) > 1 {
		n++
	}
	return n
}

package benchkit

import "testing"

func TestHopRowsJudgeTheBound(t *testing.T) {
	direct := Series{Rate: []float64{1000, 2000}}
	hop := Series{Rate: []float64{1000, 2000}} // bounds: 500, 1000
	for _, tc := range []struct {
		legate []float64
		want   string
	}{
		{[]float64{450, 900}, "PASS"}, // 0.9 of the bound
		{[]float64{350, 700}, "FAIL"}, // 0.7
		{[]float64{400, 800}, "PASS"}, // exactly 0.8
	} {
		rows := HopRows("P7", "read", 1, direct, hop, Series{Rate: tc.legate}, HopTargets{Bound: 0.8})
		if len(rows) != 3 {
			t.Fatalf("%d rows, want 3", len(rows))
		}
		bound, legate := rows[1], rows[2]
		if bound.Legate != 750 || bound.Target != "" || bound.Result != "" {
			t.Errorf("bound row %+v: want the median bound 750, not judged", bound)
		}
		if legate.Baseline != 750 || legate.Result != tc.want || legate.Target != "≥ 0.8× the bound" {
			t.Errorf("Legate %v against the bound: %+v, want %s", tc.legate, legate, tc.want)
		}
	}
}

func TestHopRowsDirectTargetMarksTheBound(t *testing.T) {
	s := Series{Rate: []float64{100}}
	rows := HopRows("P6", "query", 8, s, s, s, HopTargets{Direct: 0.7})
	if rows[1].Target != "≥ 0.7× direct" || rows[1].Result != "bound" {
		t.Errorf("bound row %+v: want the direct target, marked bound", rows[1])
	}
	if rows[2].Target != "" || rows[2].Result != "" {
		t.Errorf("Legate against the bound %+v: want it not judged", rows[2])
	}
}

func TestCompareWithoutTargetIsInformative(t *testing.T) {
	base, side := Series{Rate: []float64{10}, P50: []float64{1}, CPU: []float64{1}}, Series{Rate: []float64{1}, P50: []float64{1}, CPU: []float64{1}}
	if r := Compare("P7", "read", 1, base, side, 0, "")[0]; r.Target != "" || r.Result != "" || r.Ratio != 0.1 {
		t.Errorf("rate row %+v: want ratio 0.1, not judged", r)
	}
	if r := Compare("P6", "read", 1, base, side, 0.7, "")[0]; r.Result != "FAIL" {
		t.Errorf("rate row %+v: want FAIL against 0.7", r)
	}
}

func TestLeastRowsPutTheLeastGatewayBesideTheBound(t *testing.T) {
	direct, hop := Series{Rate: []float64{1000}}, Series{Rate: []float64{1000}} // bound 500
	least := Series{Rate: []float64{400}, CPU: []float64{100}}
	legate := Series{Rate: []float64{300}, CPU: []float64{250}}
	rows := LeastRows("P7", "read", 8, direct, hop, least, legate)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for i, want := range []float64{0.8, 0.75, 2.5} {
		if rows[i].Ratio != want || rows[i].Target != "" || rows[i].Result != "" {
			t.Errorf("row %d %+v: want ratio %v, not judged", i, rows[i], want)
		}
	}
}

package curvebench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
	"github.com/legate-mcp/legate/store/sqlite"
)

// auditSample is the store as one sample of the audit curve found it.
type auditSample struct {
	at        time.Duration // since the calls began
	calls     int64         // answered so far
	rows      int64         // in the audit table
	db, wal   int64         // the files' sizes in bytes, after a passive checkpoint
	prunedYet bool          // a prune had deleted rows before this sample
}

// auditCurve runs calls through `legate serve` at o.AuditRate for
// o.Audit, its audit retention set to a fifth of that, and samples its
// SQLite file. Legate prunes audit rows when it starts and then hourly
// (audit.Writer.Run), so within the run the harness runs the same prune
// (AuditStore.Prune of the rows older than the retention) every quarter
// of the retention, on the same file, as a compressed stand-in for the
// hourly one.
func auditCurve(ctx context.Context, o Options) ([]Curve, error) {
	retention := (o.Audit / 5).Round(time.Second)
	retention = max(retention, time.Second)
	pruneEvery, sampleEvery := retention/4, max(o.Audit/60, 250*time.Millisecond)
	up, err := harness.StartSelf(ctx, o.Dir, "audit-upstream", "upstream", "-servers", "1", "-tools", "1")
	if err != nil {
		return nil, err
	}
	defer up.Stop()
	cfg, err := harness.WriteFile(o.Dir, "audit.yaml", fmt.Sprintf("upstreams:\n  - {id: up, url: \"http://%s/mcp\"}\n"+
		"policy:\n  rules:\n    - {tool: \"mcp.up.echo\", action: allow}\naudit:\n  retention: %ds\n", up.Addr, int(retention.Seconds())))
	if err != nil {
		return nil, err
	}
	state := filepath.Join(o.Dir, "audit-state")
	lg, err := harness.StartLegate(ctx, o.Dir, "audit-legate", o.Legate, cfg, state)
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	db := st.DB()
	c := 16
	sessions, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+lg.Addr+"/mcp", c, 8, false)
	if err != nil {
		return nil, err
	}
	defer harness.CloseSessions(sessions)
	if err := waitUpstreamTools(ctx, sessions[0], 1); err != nil {
		return nil, err
	}
	var calls, failures atomic.Int64
	var firstErr atomic.Value
	var pruned atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(o.Audit)
	call := harness.ToolCall("mcp__up__echo", map[string]any{"text": "hello"})
	interval := time.Duration(float64(time.Second) * float64(c) / float64(o.AuditRate))
	for i, s := range sessions {
		wg.Go(func() {
			// Open loop: call k of this session is due at start + (k·c + i)/rate.
			for k := 0; ; k++ {
				due := start.Add(time.Duration(k)*interval + time.Duration(i)*interval/time.Duration(c))
				if !due.Before(end) || ctx.Err() != nil {
					return
				}
				time.Sleep(time.Until(due))
				if err := call(ctx, s); err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				calls.Add(1)
			}
		})
	}
	sample := func() (auditSample, error) {
		s := auditSample{at: time.Since(start), calls: calls.Load(), prunedYet: pruned.Load()}
		if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
			return s, err
		}
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM audit").Scan(&s.rows); err != nil {
			return s, err
		}
		s.db, s.wal = fileSize(filepath.Join(state, sqlite.FileName)), fileSize(filepath.Join(state, sqlite.FileName+"-wal"))
		return s, nil
	}
	var samples []auditSample
	var prunes, prunedRows int64
	sampleTick, pruneTick := time.NewTicker(sampleEvery), time.NewTicker(pruneEvery)
	defer sampleTick.Stop()
	defer pruneTick.Stop()
	s0, err := sample()
	if err != nil {
		return nil, err
	}
	samples = append(samples, s0)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-pruneTick.C:
			n, err := st.Audit().Prune(ctx, time.Now().Add(-retention))
			if err != nil {
				return nil, err
			}
			prunes++
			prunedRows += n
			if n > 0 {
				pruned.Store(true)
			}
		case <-sampleTick.C:
			s, err := sample()
			if err != nil {
				return nil, err
			}
			samples = append(samples, s)
			done = !time.Now().Before(end)
		}
	}
	wg.Wait()
	if f := failures.Load(); f > calls.Load()/100 {
		return nil, fmt.Errorf("%d of %d calls failed, first: %v", f, f+calls.Load(), firstErr.Load())
	}
	return []Curve{auditResult(o, samples, retention, pruneEvery, prunes, prunedRows, failures.Load())}, nil
}

// auditResult reads the samples: the file's bytes per audit row before
// the first prune, and its growth once retention holds it.
func auditResult(o Options, samples []auditSample, retention, pruneEvery time.Duration, prunes, prunedRows, failures int64) Curve {
	size := Metric{Name: "SQLite file (legate.db), MiB", Unit: "MiB", NoGrowth: true}
	rows := Metric{Name: "audit rows, thousands", Unit: "k", NoGrowth: true}
	var before, after []auditSample
	var walMax int64
	for _, s := range samples {
		m := s.at.Minutes()
		size.Points = append(size.Points, Point{m, float64(s.db) / (1 << 20)})
		rows.Points = append(rows.Points, Point{m, math.Max(float64(s.rows)/1000, 1e-3)})
		walMax = max(walMax, s.wal)
		if s.calls == 0 {
			continue
		}
		if !s.prunedYet {
			before = append(before, s)
		} else if s.at >= o.Audit/2 {
			after = append(after, s) // the run's second half, pruned all along: the steady state
		}
	}
	last := samples[len(samples)-1]
	perRow, beforeGrowth, afterGrowth, afterPerCall := math.NaN(), "—", "—", math.NaN()
	if n := len(before); n >= 2 && before[n-1].rows > before[0].rows {
		perRow = float64(before[n-1].db-before[0].db) / float64(before[n-1].rows-before[0].rows)
		beforeGrowth = growthOf(before)
	}
	if n := len(after); n >= 2 && after[n-1].calls > after[0].calls {
		afterPerCall = float64(after[n-1].db-after[0].db) / float64(after[n-1].calls-after[0].calls)
		afterGrowth = growthOf(after)
	}
	var t strings.Builder
	row := func(metric, value string) { fmt.Fprintf(&t, "| %s | %s |\n", metric, value) }
	t.WriteString("| metric | value |\n|---|---:|\n")
	row("calls answered (achieved rate)", fmt.Sprintf("%d (%.0f/s; %d failed)", last.calls, float64(last.calls)/last.at.Seconds(), failures))
	row(fmt.Sprintf("SQLite file per audit row, before the first prune (%d samples)", len(before)), format(perRow, "B"))
	row("SQLite file's growth, before the first prune", beforeGrowth)
	if len(before) > 0 {
		b := before[len(before)-1]
		row(fmt.Sprintf("SQLite file at %s, the last sample before the first prune (%d rows)", b.at.Round(time.Second), b.rows), format(float64(b.db)/(1<<20), "MiB"))
	}
	row(fmt.Sprintf("SQLite file at the end, %s (%d rows)", last.at.Round(time.Second), last.rows), format(float64(last.db)/(1<<20), "MiB"))
	row(fmt.Sprintf("SQLite file's growth per call over the second half, from %s (%d samples)", (o.Audit/2).Round(time.Second), len(after)), format(afterPerCall, "B"))
	row("SQLite file's growth with retention in force", afterGrowth)
	row("largest WAL file (legate.db-wal)", format(float64(walMax)/(1<<20), "MiB"))
	row("prunes run / rows pruned", fmt.Sprintf("%d / %d", prunes, prunedRows))
	note := fmt.Sprintf("`legate serve` with one upstream (echo, allowed by a rule) and `audit: {retention: %s}`; %d go-sdk sessions "+
		"calling in an open loop at %d calls/s in all for %s, each call one audit row. Every %s the harness checkpoints the WAL "+
		"(passive) on its own connection and reads the files' sizes and the audit table's rows. Legate prunes audit rows at start and "+
		"then hourly (`audit.Writer.Run`), which a run this short would never reach: the harness runs the same prune "+
		"(`AuditStore.Prune`, rows older than the retention) every %s on the same file. The steady state is read over the run's "+
		"second half; the cost per 10× work of the file against the calls answered.",
		retention, 16, o.AuditRate, o.Audit, max(o.Audit/60, 250*time.Millisecond), pruneEvery)
	return Curve{ID: "audit-store", Title: "Audit store under sustained calls, with retention", Work: "minutes", YLabel: "MiB; thousand rows",
		Metrics: []Metric{size, rows}, Notes: []string{t.String(), note}}
}

// growthOf reads the growth of the file's size against the calls made
// over samples.
func growthOf(samples []auditSample) string {
	pts := make([]Point, len(samples))
	for i, s := range samples {
		pts[i] = Point{float64(s.calls), float64(s.db)}
	}
	r, class := Growth(pts, false)
	if class == "" {
		return "—"
	}
	return fmt.Sprintf("%s (%.2f× per 10× calls)", class, r)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

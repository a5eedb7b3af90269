package curvebench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/legate-mcp/legate/cmd/legate-bench/scalebench"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/sqlite"
)

// inboxStep is one size of the approvals curve: decided and pending
// requests in the store.
type inboxStep struct{ decided, pending int }

// approvalCurves measures the approval inbox's operations against the
// requests in the store: listing the pending ones (the approver's view,
// 100 newest), getting one by id and deciding one, on SQLite and, when
// its server answers, PostgreSQL. It calls the store as the gateway and
// the admin API do (store.ApprovalStore), in this process, so that the
// figure is the store's own work: the HTTP and JSON around it are the
// same at every size.
func approvalCurves(ctx context.Context, o Options) ([]Curve, error) {
	steps := pick(o, []inboxStep{{100, 10}, {1000, 100}}, []inboxStep{{1000, 100}, {10000, 1000}, {100000, 10000}})
	sq, err := sqlite.Open(ctx, filepath.Join(o.Dir, "approvals-state"))
	if err != nil {
		return nil, err
	}
	defer sq.Close()
	c, err := inboxCurve(ctx, o, "sqlite", "SQLite", sq, sq, steps, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	curves := []Curve{c}
	dsn, drop, err := scalebench.Database(ctx, scalebench.ServerURL())
	if err != nil {
		o.Logf("curves: approvals on PostgreSQL not measured: %v", err)
		curves[0].Notes = append(curves[0].Notes, "PostgreSQL not measured here: "+err.Error())
		return curves, nil
	}
	defer drop()
	pg, err := postgres.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer pg.Close()
	// The seeding commits without waiting for the WAL's flush (thousands of
	// commits a second rather than hundreds); the operations measured wait.
	fast, err := postgres.Open(ctx, dsn+"?synchronous_commit=off")
	if err != nil {
		return nil, err
	}
	defer fast.Close()
	// Autovacuum analyzes a table that grew by a tenth; the curve grows it
	// tenfold in seconds, faster than autovacuum wakes (once a minute), so
	// it analyzes as autovacuum would before measuring. Without it the
	// plans the connections cached while the table was a hundredth of its
	// size stay until their connection's lifetime ends (an hour): a
	// sequential scan reading every request (measured by hand at 110,000
	// requests: 14.3 ms a listing before the ANALYZE, 0.53 ms after).
	analyze := func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.WithoutCancel(ctx))
		_, err = conn.Exec(ctx, "ANALYZE approvals")
		return err
	}
	c, err = inboxCurve(ctx, o, "postgres", "PostgreSQL", pg, fast, steps, analyze)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return append(curves, c), nil
}

// inboxCurve grows the inbox through steps (writing through seed, the
// same database as st), settles it when settle is not nil, and times each
// operation of st at each.
func inboxCurve(ctx context.Context, o Options, id, name string, st, seed store.Store, steps []inboxStep, settle func(context.Context) error) (Curve, error) {
	ops := pick(o, 50, 400)
	inbox := &seeder{st: st.Approvals(), seed: seed.Approvals(), base: time.Now().Add(-24 * time.Hour)}
	list := Metric{Name: "list pending (100 newest) p50", Unit: "ms", Expect: Log}
	get := Metric{Name: "get one p50", Unit: "ms", Expect: Log}
	decide := Metric{Name: "decide one p50", Unit: "ms", Expect: Log}
	for _, s := range steps {
		t0 := time.Now()
		if err := inbox.grow(ctx, s); err != nil {
			return Curve{}, err
		}
		if settle != nil {
			if err := settle(ctx); err != nil {
				return Curve{}, err
			}
		}
		o.Logf("curves: %s inbox seeded to %d decided, %d pending in %s", name, s.decided, s.pending, time.Since(t0).Round(time.Millisecond))
		lat, err := inbox.measure(ctx, ops)
		if err != nil {
			return Curve{}, err
		}
		x := float64(s.decided + s.pending)
		list.Points = append(list.Points, Point{x, lat[0]})
		get.Points = append(get.Points, Point{x, lat[1]})
		decide.Points = append(decide.Points, Point{x, lat[2]})
		o.Logf("curves: %s inbox of %d: list %.3f ms, get %.3f ms, decide %.3f ms", name, int(x), lat[0], lat[1], lat[2])
	}
	last := steps[len(steps)-1]
	return Curve{ID: "approvals-" + id, Title: "Approval inbox on " + name + " against requests stored", Work: "requests", LogX: true, LogY: true,
		YLabel: "latency, ms", Metrics: []Metric{list, get, decide},
		Notes: []string{fmt.Sprintf("%s store, grown in steps to %d decided and %d pending requests (pending a tenth of decided, "+
			"interleaved in time, written %s); %d of each operation per step, in turn, through store.ApprovalStore in the harness's process: "+
			"List{State: pending} (the approver's view, its default limit of 100), Get of a random request, Decide (approve) of a random "+
			"pending one, which is replaced, untimed, by a new pending request.", name, last.decided, last.pending, seedHow[id], ops)}}, nil
}

// seedHow says how each store is filled.
var seedHow = map[string]string{"sqlite": "by 16 writers, one request a transaction",
	"postgres": "by 16 writers, one request a transaction, with synchronous_commit off, then analyzed (ANALYZE approvals, as autovacuum would); the operations measured commit as Legate does"}

// seeder fills an inbox and keeps the ids it made.
type seeder struct {
	st, seed store.ApprovalStore // measured; written to fill
	base     time.Time
	made     int
	all      []string
	pending  []string
	decided  int
}

// grow adds requests until the inbox holds s, decided and pending
// interleaved, 16 writers at a time.
func (sd *seeder) grow(ctx context.Context, s inboxStep) error {
	var kinds []bool // true: to decide
	for range s.decided - sd.decided {
		kinds = append(kinds, true)
	}
	for range s.pending - len(sd.pending) {
		kinds = append(kinds, false)
	}
	rand.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	reqs := make([]*store.Approval, len(kinds))
	for i := range reqs {
		reqs[i] = sd.request()
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for w := range len(errs) {
		wg.Go(func() {
			for i := w; i < len(reqs) && errs[w] == nil; i += len(errs) {
				if errs[w] = sd.seed.Create(ctx, reqs[i]); errs[w] == nil && kinds[i] {
					_, errs[w] = sd.seed.Decide(ctx, reqs[i].ID, i%3 != 0, "approver", "", time.Now())
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i, r := range reqs {
		sd.all = append(sd.all, r.ID)
		if kinds[i] {
			sd.decided++
		} else {
			sd.pending = append(sd.pending, r.ID)
		}
	}
	return nil
}

// request is a new pending request, created a millisecond after the last.
func (sd *seeder) request() *store.Approval {
	sd.made++
	args, _ := json.Marshal(map[string]any{"channel": "deploys", "text": fmt.Sprintf("release %d is out", sd.made)})
	h := sha256.Sum256(args)
	created := sd.base.Add(time.Duration(sd.made) * time.Millisecond)
	return &store.Approval{ID: fmt.Sprintf("apr-%08d", sd.made), Principal: fmt.Sprintf("agent-%d", sd.made%50), Session: "s",
		Tool: "slack.send_message", Class: "write", Args: args, ArgsHash: hex.EncodeToString(h[:]), DefHash: "def",
		Definition: json.RawMessage(`{"name":"send_message","description":"Send a message to a channel."}`),
		CreatedAt:  created, ExpiresAt: created.Add(7 * 24 * time.Hour)}
}

// measure times n of each operation, in turn, and returns the p50s of
// list, get and decide in milliseconds.
func (sd *seeder) measure(ctx context.Context, n int) ([3]float64, error) {
	var lat [3][]time.Duration
	for range n {
		t0 := time.Now()
		got, err := sd.st.List(ctx, store.ApprovalFilter{State: store.StatePending})
		lat[0] = append(lat[0], time.Since(t0))
		if err != nil {
			return [3]float64{}, err
		}
		if want := min(100, len(sd.pending)); len(got) != want {
			return [3]float64{}, fmt.Errorf("list pending: %d requests, want %d", len(got), want)
		}
		id := sd.all[rand.IntN(len(sd.all))]
		t0 = time.Now()
		a, err := sd.st.Get(ctx, id)
		lat[1] = append(lat[1], time.Since(t0))
		if err != nil {
			return [3]float64{}, err
		}
		if a.ID != id {
			return [3]float64{}, fmt.Errorf("get %s: got %s", id, a.ID)
		}
		k := rand.IntN(len(sd.pending))
		id = sd.pending[k]
		t0 = time.Now()
		_, err = sd.st.Decide(ctx, id, true, "approver", "", time.Now())
		lat[2] = append(lat[2], time.Since(t0))
		if err != nil {
			return [3]float64{}, fmt.Errorf("decide %s: %w", id, err)
		}
		r := sd.request()
		if err := sd.seed.Create(ctx, r); err != nil {
			return [3]float64{}, err
		}
		sd.pending[k] = r.ID
		sd.all = append(sd.all, r.ID)
		sd.decided++
	}
	var out [3]float64
	for i := range lat {
		slices.Sort(lat[i])
		out[i] = float64(lat[i][len(lat[i])/2]) / float64(time.Millisecond)
	}
	return out, nil
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testApprovals(t *testing.T, open Opener) {
	for _, s := range []struct {
		name string
		run  func(*testing.T, store.ApprovalStore)
	}{
		{"create and get", approvalCreateGet},
		{"list newest first", approvalList},
		{"list by tenant", approvalListTenants},
		{"find by binding", approvalFind},
		{"open finds or creates", approvalOpen},
		{"open races", approvalOpenRace},
		{"expire", approvalExpire},
		{"decide once", approvalDecideOnce},
		{"decide races", approvalDecideRace},
		{"claim races", approvalClaimRace},
		{"finish once", approvalFinish},
		{"fail interrupted", approvalFailInterrupted},
	} {
		t.Run(s.name, func(t *testing.T) { s.run(t, open(t).Approvals()) })
	}
}

// request is a pending request of principal in tenant, made at created,
// expiring an hour later.
func request(id, principal, tenant string, created time.Time) *store.Approval {
	return &store.Approval{ID: id, Principal: principal, Tenant: tenant, Session: "s1", Profile: "coding", CredentialSet: "team", Tool: "slack.post_message", Class: "write",
		Args: []byte(`{"channel":"#ops","text":"hi"}`), ArgsHash: "ah", DefHash: "dh", Definition: []byte(`{"name":"post_message"}`),
		CreatedAt: created, ExpiresAt: created.Add(time.Hour)}
}

func create(t *testing.T, as store.ApprovalStore, a *store.Approval) *store.Approval {
	t.Helper()
	must(t, as.Create(context.Background(), a))
	return a
}

// stateIs fails the test unless the request id is in state.
func stateIs(t *testing.T, as store.ApprovalStore, id, state string) *store.Approval {
	t.Helper()
	a, err := as.Get(context.Background(), id)
	must(t, err)
	if a.State != state {
		t.Fatalf("approval %s is %s, want %s", id, a.State, state)
	}
	return a
}

func ids(list []*store.Approval) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.ID)
	}
	return out
}

func approvalCreateGet(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	want := create(t, as, request("ap_1", "bob", "acme", base))
	if want.State != store.StatePending {
		t.Fatalf("Create leaves the request %q, want it marked pending", want.State)
	}
	got, err := as.Get(ctx, "ap_1")
	must(t, err)
	if got.ID != want.ID || got.Principal != "bob" || got.Tenant != "acme" || got.Session != "s1" || got.Tool != want.Tool ||
		got.Class != "write" || !sameJSON(got.Args, want.Args) || got.ArgsHash != "ah" || got.DefHash != "dh" || got.Profile != "coding" || got.CredentialSet != "team" ||
		!sameJSON(got.Definition, want.Definition) || got.State != store.StatePending || !got.CreatedAt.Equal(base) ||
		!got.ExpiresAt.Equal(want.ExpiresAt) || !got.DecidedAt.IsZero() || got.Decider != "" || got.Reason != "" || len(got.Outcome) != 0 {
		t.Fatalf("get:\n got %+v\nwant %+v", got, want)
	}
	if _, err := as.Get(ctx, "ap_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get unknown: %v, want ErrNotFound", err)
	}
	if err := as.Create(ctx, request("ap_1", "eve", "", base)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("creating an id in use: %v, want ErrExists", err)
	}
	if got, _ := as.Get(ctx, "ap_1"); got.Principal != "bob" {
		t.Fatalf("a refused create changed the request: %+v", got)
	}
	if n, err := as.CountPending(ctx); err != nil || n != 1 {
		t.Fatalf("pending: %d %v, want 1", n, err)
	}
}

func approvalList(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	for i := range 3 {
		create(t, as, request(fmt.Sprint("ap_", i), "bob", "", base.Add(time.Duration(i)*time.Second)))
	}
	_, err := as.Decide(ctx, "ap_1", true, "alice", "", base.Add(time.Minute))
	must(t, err)
	for name, tc := range map[string]struct {
		f    store.ApprovalFilter
		want []string
	}{
		"every state":  {store.ApprovalFilter{}, []string{"ap_2", "ap_1", "ap_0"}},
		"one state":    {store.ApprovalFilter{State: store.StatePending}, []string{"ap_2", "ap_0"}},
		"other state":  {store.ApprovalFilter{State: store.StateApproved}, []string{"ap_1"}},
		"none in it":   {store.ApprovalFilter{State: store.StateExecuted}, nil},
		"limited":      {store.ApprovalFilter{Limit: 2}, []string{"ap_2", "ap_1"}},
		"other tenant": {store.ApprovalFilter{Tenant: "acme"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			list, err := as.List(ctx, tc.f)
			must(t, err)
			if got := ids(list); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("limit 0 is 100", func(t *testing.T) {
		for i := range 100 {
			create(t, as, request(fmt.Sprint("ap_more_", i), "bob", "", base.Add(time.Hour)))
		}
		list, err := as.List(ctx, store.ApprovalFilter{})
		must(t, err)
		if len(list) != 100 {
			t.Fatalf("listed %d, want 100", len(list))
		}
	})
}

// The zero filter is the shared tenant's view, never every tenant's.
func approvalListTenants(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	for _, tenant := range []string{"acme", "globex", ""} {
		create(t, as, request("ap_"+tenant, "p", tenant, base))
	}
	for name, tc := range map[string]struct {
		f    store.ApprovalFilter
		want []string
	}{
		"zero filter: the shared tenant":     {store.ApprovalFilter{}, []string{""}},
		"one tenant":                         {store.ApprovalFilter{Tenant: "acme"}, []string{"acme"}},
		"every tenant":                       {store.ApprovalFilter{AllTenants: true}, []string{"", "acme", "globex"}},
		"every tenant, whatever Tenant says": {store.ApprovalFilter{AllTenants: true, Tenant: "acme"}, []string{"", "acme", "globex"}},
		"every tenant, one state":            {store.ApprovalFilter{AllTenants: true, State: store.StatePending}, []string{"", "acme", "globex"}},
		"every tenant, a state none is in":   {store.ApprovalFilter{AllTenants: true, State: store.StateApproved}, nil},
		"a tenant nobody has":                {store.ApprovalFilter{Tenant: "initech"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			list, err := as.List(ctx, tc.f)
			must(t, err)
			var got []string
			for _, a := range list {
				got = append(got, a.Tenant)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("tenants %q, want %q", got, tc.want)
			}
		})
	}
}

// Find is how a call made again with the same arguments finds its request
// and, once run, its outcome.
func approvalFind(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	create(t, as, request("ap_old", "bob", "acme", base))
	create(t, as, request("ap_new", "bob", "acme", base.Add(time.Second)))
	b := store.Binding{Principal: "bob", Tenant: "acme", Tool: "slack.post_message", ArgsHash: "ah", DefHash: "dh"}
	for name, tc := range map[string]struct {
		change func(*store.Binding)
		since  time.Time
		want   string // "" for ErrNotFound
	}{
		"the newest":          {nil, base.Add(-time.Hour), "ap_new"},
		"created after since": {nil, base.Add(500 * time.Millisecond), "ap_new"},
		"none after since":    {nil, base.Add(time.Second), ""},
		"another principal":   {func(b *store.Binding) { b.Principal = "eve" }, base.Add(-time.Hour), ""},
		"another tenant":      {func(b *store.Binding) { b.Tenant = "" }, base.Add(-time.Hour), ""},
		"another tool":        {func(b *store.Binding) { b.Tool = "slack.delete_message" }, base.Add(-time.Hour), ""},
		"other arguments":     {func(b *store.Binding) { b.ArgsHash = "other" }, base.Add(-time.Hour), ""},
		"another definition":  {func(b *store.Binding) { b.DefHash = "other" }, base.Add(-time.Hour), ""},
	} {
		t.Run(name, func(t *testing.T) {
			bb := b
			if tc.change != nil {
				tc.change(&bb)
			}
			a, err := as.Find(ctx, bb, tc.since)
			switch {
			case tc.want == "" && !errors.Is(err, store.ErrNotFound):
				t.Fatalf("found %+v, %v; want ErrNotFound", a, err)
			case tc.want != "" && (err != nil || a.ID != tc.want):
				t.Fatalf("found %+v, %v; want %s", a, err, tc.want)
			}
		})
	}
	t.Run("decided is found, expired is not", func(t *testing.T) {
		_, err := as.Decide(ctx, "ap_old", true, "alice", "", base.Add(time.Minute))
		must(t, err)
		_, err = as.Expire(ctx, base.Add(2*time.Hour)) // ap_new expires
		must(t, err)
		a, err := as.Find(ctx, b, base.Add(-time.Hour))
		if err != nil || a.ID != "ap_old" || a.State != store.StateApproved {
			t.Fatalf("found %+v, %v; want ap_old approved", a, err)
		}
	})
}

// Open is Find, then Create if Find found nothing live, in one step.
func approvalOpen(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	since := base.Add(-time.Hour)
	a, created, err := as.Open(ctx, request("ap_1", "bob", "", base), since, base)
	if err != nil || !created || a.ID != "ap_1" || a.State != store.StatePending {
		t.Fatalf("first open: %+v created %v, %v; want ap_1 created pending", a, created, err)
	}
	stateIs(t, as, "ap_1", store.StatePending)
	// The same binding finds it, decided or not; the new request is not stored.
	a, created, err = as.Open(ctx, request("ap_2", "bob", "", base.Add(time.Second)), since, base.Add(time.Second))
	if err != nil || created || a.ID != "ap_1" {
		t.Fatalf("second open: %+v created %v, %v; want ap_1 found", a, created, err)
	}
	if _, err := as.Get(ctx, "ap_2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ap_2 was stored (%v), want only ap_1", err)
	}
	// Another binding gets its own.
	other := request("ap_3", "eve", "", base)
	if a, created, err = as.Open(ctx, other, since, base); err != nil || !created || a.ID != "ap_3" {
		t.Fatalf("another principal: %+v created %v, %v; want ap_3 created", a, created, err)
	}
	// A pending request past its expiry is not live: the call opens a new one.
	later := base.Add(2 * time.Hour)
	if a, created, err = as.Open(ctx, request("ap_4", "bob", "", later), since, later); err != nil || !created || a.ID != "ap_4" {
		t.Fatalf("after ap_1 expired: %+v created %v, %v; want ap_4 created", a, created, err)
	}
	// Nor is one created before since.
	if a, created, err = as.Open(ctx, request("ap_5", "eve", "", later), later.Add(-time.Minute), later); err != nil || !created || a.ID != "ap_5" {
		t.Fatalf("ap_3 made before since: %+v created %v, %v; want ap_5 created", a, created, err)
	}
	// An id already taken is ErrExists, as with Create.
	if _, _, err := as.Open(ctx, request("ap_1", "carol", "", base), since, base); !errors.Is(err, store.ErrExists) {
		t.Fatalf("open with a taken id: %v, want ErrExists", err)
	}
}

// Racers open one binding at once, each with a request of its own: one
// request is stored, and every racer gets it.
func approvalOpenRace(t *testing.T, as store.ApprovalStore) {
	openRace(t, func(int) store.ApprovalStore { return as })
}

func openRace(t *testing.T, on func(i int) store.ApprovalStore) {
	ctx := context.Background()
	for round := range 5 {
		type opened struct {
			id      string
			created bool
		}
		got := race(func(i int) opened {
			r := request(fmt.Sprintf("ap_%d_%d", round, i), "bob", "", base)
			r.ArgsHash = fmt.Sprint("ah", round)
			a, created, err := on(i).Open(ctx, r, base.Add(-time.Hour), base)
			if err != nil {
				t.Error(err)
				return opened{}
			}
			return opened{a.ID, created}
		})
		ids, creators := map[string]bool{}, 0
		for _, o := range got {
			ids[o.id] = true
			if o.created {
				creators++
			}
		}
		if len(ids) != 1 || creators != 1 {
			t.Fatalf("round %d: %d racers opened %d requests, %d created; want one, created once", round, racers, len(ids), creators)
		}
	}
}

func approvalExpire(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	soon := create(t, as, request("ap_soon", "bob", "", base))
	late := request("ap_late", "bob", "", base)
	late.ExpiresAt = base.Add(2 * time.Hour)
	create(t, as, late)
	create(t, as, request("ap_approved", "bob", "", base))
	_, err := as.Decide(ctx, "ap_approved", true, "alice", "", base.Add(time.Minute))
	must(t, err)

	// A request expires at its expiry instant; only pending ones expire.
	if n, err := as.Expire(ctx, soon.ExpiresAt); err != nil || n != 1 {
		t.Fatalf("expired %d, %v; want 1", n, err)
	}
	stateIs(t, as, "ap_soon", store.StateExpired)
	stateIs(t, as, "ap_late", store.StatePending)
	stateIs(t, as, "ap_approved", store.StateApproved)
	if n, err := as.Expire(ctx, soon.ExpiresAt); err != nil || n != 0 {
		t.Fatalf("expired again %d, %v; want 0", n, err)
	}
	if n, err := as.CountPending(ctx); err != nil || n != 1 {
		t.Fatalf("pending: %d %v, want 1", n, err)
	}
	if _, err := as.Decide(ctx, "ap_soon", true, "alice", "", base.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("deciding an expired request: %v, want ErrConflict", err)
	}
}

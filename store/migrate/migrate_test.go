package migrate_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/migrate"
	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
	"github.com/legate-mcp/legate/vault"
)

// keyRing is a vault key ring of one new key, as LEGATE_MASTER_KEY holds it.
func keyRing(t *testing.T) vault.KeySource {
	k := make([]byte, 32)
	rand.Read(k)
	return vault.KeySource{Env: "k1:" + base64.StdEncoding.EncodeToString(k)}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// state is what the populated SQLite store holds, to find again after the copy.
type state struct {
	path              string
	executed, pending string // approval ids
	auditRows         int
	lastAuditID       int64
	tokenHash, secret string
	keys              vault.KeySource
	upstreamURL       string
}

// populate runs a gateway on a SQLite store: an upstream stored with its
// tools cached and pinned, a write approved and executed after its call
// returned, another left pending, audit rows past a batch, a vault
// secret, a token and an operation record.
func populate(t *testing.T) state {
	ctx := context.Background()
	_, srv := upstreamtest.NewRaw(t,
		`{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"post","inputSchema":{"type":"object"}}`)
	s := state{path: filepath.Join(t.TempDir(), "legate.db"), keys: keyRing(t), upstreamURL: srv.URL()}
	st, err := sqlite.OpenFile(ctx, s.path)
	must(t, err)
	defer st.Close()
	def, _ := json.Marshal(map[string]string{"id": "up", "url": srv.URL()})
	must(t, st.Upstreams().Create(ctx, store.Upstream{ID: "up", Definition: def}))
	cfg, err := config.Parse([]byte("approvals:\n  wait: 50ms\n"), nil)
	must(t, err)
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	must(t, err)
	gw.Start(ctx)
	defer gw.Close()
	upstreamtest.Eventually(t, 10*time.Second, func() bool { _, ok := gw.Catalog().Lookup("mcp.up.post"); return ok }, "the upstream's tools never listed")

	if res, err := gw.Call(ctx, "mcp.up.look", json.RawMessage(`{}`), server.CallOptions{}); err != nil || res.IsError {
		t.Fatalf("read call: %+v %v", res, err)
	}
	for i := range 2 {
		res, err := gw.Call(ctx, "mcp.up.post", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), server.CallOptions{})
		if err != nil || !res.IsError {
			t.Fatalf("write call %d: %+v %v, want APPROVAL_PENDING", i, res, err)
		}
	}
	list, err := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending})
	must(t, err)
	if len(list) != 2 {
		t.Fatalf("%d pending approvals, want 2", len(list))
	}
	s.executed, s.pending = list[0].ID, list[1].ID
	_, err = gw.Decide(ctx, s.executed, true, "admin", "fine")
	must(t, err)
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		a, err := st.Approvals().Get(ctx, s.executed)
		return err == nil && a.State == store.StateExecuted
	}, "the approved call never ran")

	v := vault.New(st.Secrets(), s.keys, nil)
	s.secret = "s3cret-value"
	_, err = v.Set(ctx, "", "api-token", []byte(s.secret))
	must(t, err)
	sum := sha256.Sum256([]byte("the-token"))
	s.tokenHash = hex.EncodeToString(sum[:])
	must(t, st.Tokens().Create(ctx, store.Token{Name: "ci", Hash: s.tokenHash, Role: "user"}))
	_, err = st.Operations().Begin(ctx, "web", "op-1", time.Now(), time.Minute)
	must(t, err)
	must(t, st.Operations().Finish(ctx, "web", "op-1", []byte(`{"ok":true}`), time.Now()))
	_, err = st.KB().Put(ctx, "kb", store.KBDocument{Source: "/srv/a.md", Kind: "markdown", Title: "A", Text: "A text.", Hash: "h",
		Passages: []store.KBPassage{{Headings: []string{"A"}, Text: "A text.", Hash: "p", VectorKey: "k", Vector: []float32{0.6, -0.8}}}})
	must(t, err)
	gw.Close() // writes its last audit rows

	var rows []store.AuditRow
	for i := range 1200 {
		rows = append(rows, store.AuditRow{Time: time.Now(), Principal: "bulk", Tool: "mcp.up.look", Outcome: "ok", Detail: fmt.Sprint(i)})
	}
	must(t, st.Audit().Append(ctx, rows))
	all, err := st.Audit().Query(ctx, store.AuditQuery{Limit: 5000})
	must(t, err)
	s.auditRows, s.lastAuditID = len(all), all[len(all)-1].ID
	return s
}

func openPG(t *testing.T, url string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), url)
	must(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// A populated SQLite state copied into PostgreSQL: a gateway on it serves
// the same tools, approvals, audit and vault secrets; a second run copies
// nothing again.
func TestCopyThenServeFromPostgres(t *testing.T) {
	ctx := context.Background()
	s := populate(t)
	pg := openPG(t, pgtest.URL(t))
	var told []string
	rep, err := migrate.Copy(ctx, s.path, pg, &migrate.Options{Progress: func(c migrate.TableCount) { told = append(told, c.Table) }})
	must(t, err)
	if rep.Resumed || len(told) != len(rep.Tables) {
		t.Fatalf("first copy: resumed %v, told of %v", rep.Resumed, told)
	}
	for _, c := range rep.Tables {
		if c.Copied != c.Rows || c.Kept != 0 {
			t.Errorf("%s: %d rows, copied %d, kept %d", c.Table, c.Rows, c.Copied, c.Kept)
		}
	}

	gw, err := server.New(ctx, server.Options{Store: pg, Vault: vault.New(pg.Secrets(), s.keys, nil)})
	must(t, err)
	defer gw.Close()
	for _, tool := range []string{"mcp.up.look", "mcp.up.post"} {
		if _, ok := gw.Catalog().Lookup(tool); !ok {
			t.Errorf("the gateway on PostgreSQL does not list %s from the copied cache", tool)
		}
	}
	if docs, err := pg.KB().Load(ctx, "kb", nil); err != nil || len(docs) != 1 || len(docs[0].Passages) != 1 || !slices.Equal(docs[0].Passages[0].Vector, []float32{0.6, -0.8}) {
		t.Errorf("the knowledge base after the copy: %+v %v", docs, err)
	}
	if g, err := pg.KB().Generation(ctx, "kb"); err != nil || g != 1 {
		t.Errorf("the knowledge base's generation after the copy: %d %v", g, err)
	}
	a, err := pg.Approvals().Get(ctx, s.executed)
	if err != nil || a.State != store.StateExecuted || a.Decider != "admin" || a.Reason != "fine" || len(a.Outcome) == 0 {
		t.Fatalf("executed approval after the copy: %+v %v", a, err)
	}
	if _, err := gw.Decide(ctx, s.pending, false, "admin", "not now"); err != nil {
		t.Fatalf("deciding the copied pending approval on PostgreSQL: %v", err)
	}
	audit, err := pg.Audit().Query(ctx, store.AuditQuery{Limit: 5000})
	must(t, err)
	if len(audit) != s.auditRows || audit[len(audit)-1].ID != s.lastAuditID {
		t.Fatalf("audit: %d rows up to id %d, want %d up to %d", len(audit), audit[len(audit)-1].ID, s.auditRows, s.lastAuditID)
	}
	must(t, pg.Audit().Append(ctx, []store.AuditRow{{Time: time.Now(), Principal: "after", Tool: "x", Outcome: "ok"}}))
	if after, err := pg.Audit().Query(ctx, store.AuditQuery{Principal: "after"}); err != nil || len(after) != 1 || after[0].ID <= s.lastAuditID {
		t.Fatalf("a row written after the copy: %+v %v, want an id after %d", after, err, s.lastAuditID)
	}
	value, _, err := vault.New(pg.Secrets(), s.keys, nil).Get(ctx, "", "api-token")
	if err != nil || string(value) != s.secret {
		t.Fatalf("vault secret after the copy: %q %v", value, err)
	}
	if tok, err := pg.Tokens().ByHash(ctx, s.tokenHash); err != nil || tok.Name != "ci" {
		t.Fatalf("token after the copy: %+v %v", tok, err)
	}
	if op, err := pg.Operations().Begin(ctx, "web", "op-1", time.Now(), time.Minute); err != nil || op.State != store.OpDone || string(op.Outcome) != `{"ok":true}` {
		t.Fatalf("operation record after the copy: %+v %v", op, err)
	}

	// Run again: everything is there already.
	rep, err = migrate.Copy(ctx, s.path, pg, nil)
	must(t, err)
	if !rep.Resumed {
		t.Fatal("a second run did not know the source")
	}
	for _, c := range rep.Tables {
		if c.Copied != 0 || c.Kept != c.Rows {
			t.Errorf("second run, %s: %d rows, copied %d, kept %d; want every row kept", c.Table, c.Rows, c.Copied, c.Kept)
		}
	}
	if a, _ := pg.Approvals().Get(ctx, s.pending); a.State != store.StateDenied {
		t.Fatalf("a second run changed a decision made since: %s", a.State)
	}

	st, err := migrate.Check(ctx, pgtest.URL(t))
	must(t, err)
	if st.Version != 0 || st.Pending != postgres.Migrations() {
		t.Fatalf("check of an empty schema: %+v", st)
	}
}

// A copy stopped half-way continues where it stopped.
func TestCopyResumes(t *testing.T) {
	ctx := context.Background()
	s := populate(t)
	url := pgtest.URL(t)
	pg := openPG(t, url)
	_, err := migrate.Copy(ctx, s.path, pg, nil)
	must(t, err)
	// Lose part of what was copied, as a run stopped before its end.
	_, err = pg.DB().ExecContext(ctx, `DELETE FROM audit WHERE id > (SELECT MIN(id) + 300 FROM audit); DELETE FROM secrets; UPDATE imports SET finished_at = 0`)
	must(t, err)
	rep, err := migrate.Copy(ctx, s.path, pg, nil)
	must(t, err)
	for _, c := range rep.Tables {
		switch c.Table {
		case "audit":
			if c.Copied != int64(s.auditRows-301) || c.Kept != 301 {
				t.Errorf("audit: copied %d kept %d, want %d and 301", c.Copied, c.Kept, s.auditRows-301)
			}
		case "secrets":
			if c.Copied != c.Rows || c.Rows == 0 {
				t.Errorf("secrets: %+v", c)
			}
		default:
			if c.Copied != 0 {
				t.Errorf("%s: copied %d again", c.Table, c.Copied)
			}
		}
	}
	chk, err := migrate.Check(ctx, url)
	must(t, err)
	if chk.Version != postgres.Migrations() || chk.Pending != 0 {
		t.Fatalf("check: %+v", chk)
	}
	for _, c := range chk.Tables {
		if c.Table == "audit" && c.Rows != int64(s.auditRows) {
			t.Fatalf("check counts %d audit rows, want %d", c.Rows, s.auditRows)
		}
	}
}

// A target holding other data is refused, unless forced; forced, its rows
// are kept.
func TestCopyRefusesATargetInUse(t *testing.T) {
	ctx := context.Background()
	s := populate(t)
	pg := openPG(t, pgtest.URL(t))
	must(t, pg.Tokens().Create(ctx, store.Token{Name: "ci", Hash: "other-hash", Role: "admin"}))
	_, err := migrate.Copy(ctx, s.path, pg, nil)
	if !errors.Is(err, migrate.ErrTargetInUse) {
		t.Fatalf("copy into a store in use: %v, want ErrTargetInUse", err)
	}
	if list, _ := pg.Upstreams().List(ctx); len(list) != 0 {
		t.Fatal("a refused copy wrote")
	}
	rep, err := migrate.Copy(ctx, s.path, pg, &migrate.Options{Force: true})
	must(t, err)
	if tok, err := pg.Tokens().ByHash(ctx, "other-hash"); err != nil || tok.Role != "admin" {
		t.Fatalf("the target's own token after a forced copy: %+v %v", tok, err)
	}
	i := slices.IndexFunc(rep.Tables, func(c migrate.TableCount) bool { return c.Table == "tokens" })
	if c := rep.Tables[i]; c.Kept != 1 || c.Copied != 0 {
		t.Fatalf("tokens: %+v, want the source's token with a name taken kept out", c)
	}
}

// Check reports a SQLite store without changing it, and names what it
// cannot open.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "legate.db")
	st, err := sqlite.OpenFile(ctx, path)
	must(t, err)
	must(t, st.Connectors().Create(ctx, store.Connector{ID: "web", Type: "http"}))
	st.Close()
	for _, url := range []string{path, "sqlite://" + path} {
		chk, err := migrate.Check(ctx, url)
		must(t, err)
		if chk.Backend != "sqlite" || chk.Version != migrate.SQLiteSchema || chk.Pending != 0 || chk.Tables[0].Table != "connectors" || chk.Tables[0].Rows != 1 {
			t.Fatalf("check %s: %+v", url, chk)
		}
	}
	if _, err := migrate.Check(ctx, filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Fatal("checking a store that does not exist: no error")
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Fatal("check created a store")
	}
}

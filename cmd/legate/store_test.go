package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// The default store is the embedded database that sqlite.Open(state dir) opens.
func TestStoreDefaultsToTheStateDirDatabase(t *testing.T) {
	g := &globals{}
	t.Setenv("LEGATE_STORE", "")
	if got, want := g.resolveStoreURL("/st"), "sqlite://"+filepath.Join("/st", sqlite.FileName); got != want {
		t.Fatalf("default store %q, want %q", got, want)
	}
}

// seedApproval stores one request in the database at path.
func seedApproval(t *testing.T, path, id string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	a := &store.Approval{ID: id, Principal: "p", Tool: "t.x", Class: "write", Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
}

// --store, or $LEGATE_STORE, names the store instead of the state directory's.
func TestStoreFromFlagOrEnv(t *testing.T) {
	for name, tc := range map[string]struct {
		flag, env, envURL bool
	}{
		"flag":             {flag: true},
		"env":              {env: true},
		"LEGATE_STORE_URL": {envURL: true},
	} {
		t.Run(name, func(t *testing.T) {
			state, db := t.TempDir(), filepath.Join(t.TempDir(), "elsewhere.db")
			seedApproval(t, db, "ap_elsewhere")
			args := []string{"approvals", "list", "-o", "json", "--state-dir", state}
			t.Setenv("LEGATE_STORE", "")
			t.Setenv("LEGATE_STORE_URL", "")
			if tc.envURL {
				t.Setenv("LEGATE_STORE_URL", "sqlite://"+db)
			}
			if tc.flag {
				args = append(args, "--store", "sqlite://"+db)
			}
			if tc.env {
				t.Setenv("LEGATE_STORE", "sqlite://"+db)
			}
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var views []struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(out), &views); err != nil || len(views) != 1 || views[0].ID != "ap_elsewhere" {
				t.Fatalf("listed %s (%v), want ap_elsewhere", out, err)
			}
			if _, err := os.Stat(filepath.Join(state, sqlite.FileName)); !os.IsNotExist(err) {
				t.Fatalf("the state directory's database was made: %v", err)
			}
		})
	}
}

func TestStoreUnknownSchemeNamesTheKnown(t *testing.T) {
	t.Setenv("LEGATE_STORE", "")
	_, err := runCLI(t, "approvals", "list", "--state-dir", t.TempDir(), "--store", "mysql://db.internal/legate")
	if err == nil || !strings.Contains(err.Error(), `unknown scheme "mysql"`) || !strings.Contains(err.Error(), "known: postgres, postgresql, sqlite") {
		t.Fatalf("error %v, want one naming the known schemes", err)
	}
}

// store check reports the store the flags name, and store migrate copies
// it into PostgreSQL (store/migrate tests the copy itself).
func TestStoreCheckAndMigrateCommands(t *testing.T) {
	t.Setenv("LEGATE_STORE", "")
	t.Setenv("LEGATE_STORE_URL", "")
	state := t.TempDir()
	seedApproval(t, filepath.Join(state, sqlite.FileName), "ap_1")
	out, err := runCLI(t, "store", "check", "--state-dir", state, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var st struct {
		Backend string `json:"backend"`
		Pending int    `json:"pending_migrations"`
		Tables  []struct {
			Table string `json:"table"`
			Rows  int    `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Backend != "sqlite" || st.Pending != 0 {
		t.Fatalf("check: %s (%v)", out, err)
	}
	for _, tb := range st.Tables {
		if tb.Table == "approvals" && tb.Rows != 1 {
			t.Fatalf("check counts %d approvals, want 1", tb.Rows)
		}
	}
	if out, err := runCLI(t, "store", "migrate", "--state-dir", state, "--to", "mysql://db/legate"); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("migrate to a non-PostgreSQL store: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "store", "migrate", "--state-dir", state); err == nil || !strings.Contains(err.Error(), "to") {
		t.Fatalf("migrate without --to: %v\n%s", err, out)
	}
}

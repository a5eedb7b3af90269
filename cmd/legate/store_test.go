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
		flag, env bool
	}{
		"flag": {flag: true},
		"env":  {env: true},
	} {
		t.Run(name, func(t *testing.T) {
			state, db := t.TempDir(), filepath.Join(t.TempDir(), "elsewhere.db")
			seedApproval(t, db, "ap_elsewhere")
			args := []string{"approvals", "list", "-o", "json", "--state-dir", state}
			t.Setenv("LEGATE_STORE", "")
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
	_, err := runCLI(t, "approvals", "list", "--state-dir", t.TempDir(), "--store", "postgres://db.internal/legate")
	if err == nil || !strings.Contains(err.Error(), `unknown scheme "postgres"`) || !strings.Contains(err.Error(), "known: sqlite") {
		t.Fatalf("error %v, want one naming the known schemes", err)
	}
}

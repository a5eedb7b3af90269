package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func TestApprovalsListByTenant(t *testing.T) {
	state := t.TempDir()
	st, err := sqlite.Open(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tenant := range []string{"acme", ""} {
		a := &store.Approval{ID: "id-" + tenant, Principal: "p", Tenant: tenant, Tool: "t.x", Class: "write",
			Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := st.Approvals().Create(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"every tenant by default": {nil, []string{"", "acme"}},
		"one tenant":              {[]string{"--tenant", "acme"}, []string{"acme"}},
		"the shared tenant":       {[]string{"--tenant", ""}, []string{""}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"approvals", "list", "-o", "json", "--state-dir", state}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var views []struct {
				Tenant string `json:"tenant"`
			}
			if err := json.Unmarshal([]byte(out), &views); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got []string
			for _, v := range views {
				got = append(got, v.Tenant)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("tenants %q, want %q", got, tc.want)
			}
		})
	}
}

// approvals list --state names only real states.
func TestApprovalsListUnknownState(t *testing.T) {
	_, err := runCLI(t, "approvals", "list", "--state", "bogus", "--state-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `unknown approval state "bogus"`) {
		t.Fatalf("approvals list --state bogus: %v", err)
	}
}

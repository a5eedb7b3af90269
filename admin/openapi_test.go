package admin_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/admin"
)

// The OpenAPI document and the routes describe each other: every route
// has a documented operation, every documented operation is routed, and
// the API serves the document.
func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(admin.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
	mux := http.NewServeMux()
	routed := map[string]bool{}
	for _, p := range admin.RoutePatterns() {
		mux.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
		routed[p] = false
	}
	fill := strings.NewReplacer("{id}", "x1", "{name}", "x1", "{instance}", "x1")
	for path, ops := range doc.Paths {
		for method := range ops {
			m := strings.ToUpper(method)
			r := httptest.NewRequest(m, fill.Replace(path), nil)
			if _, pattern := mux.Handler(r); pattern == "" {
				t.Errorf("%s %s is documented but not routed", m, path)
			} else {
				routed[pattern] = true
			}
		}
	}
	for p, ok := range routed {
		if !ok {
			t.Errorf("route %s is not documented in openapi.json", p)
		}
	}
	w := do(admin.Handler(newInbox(), &admin.Options{Token: "right"}), "GET", "/admin/v1/openapi.json", "right", "")
	if w.Code != http.StatusOK || w.Body.String() != string(admin.OpenAPI) {
		t.Errorf("GET /admin/v1/openapi.json: %d", w.Code)
	}
}

// A Client calls any route: the answer decoded, an error answer an *Error
// with its code.
func TestClientDo(t *testing.T) {
	srv := httptest.NewServer(admin.Handler(newInbox(), &admin.Options{Token: "right"}))
	defer srv.Close()
	c := &admin.Client{URL: srv.URL + "/mcp", Token: "right"}
	var list struct{ Approvals []admin.ApprovalView }
	if err := c.Do(t.Context(), "GET", "/admin/v1/approvals?tenant=", nil, &list); err != nil || len(list.Approvals) != 1 {
		t.Fatalf("%v %+v", err, list)
	}
	var got admin.ApprovalView
	if err := c.Do(t.Context(), "POST", "/admin/v1/approvals/a1/deny", map[string]string{"reason": "no"}, &got); err != nil || got.State != "denied" || got.Reason != "no" {
		t.Fatalf("%v %+v", err, got)
	}
	err := c.Do(t.Context(), "POST", "/admin/v1/approvals/a1/deny", nil, nil)
	var e *admin.Error
	if !errors.As(err, &e) || e.Code != admin.CodeConflict || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("deciding twice: %v", err)
	}
}

// A read across tenants repeated and seeing the same is audited once; one
// that sees something else is audited again.
func TestRepeatedReadsAcrossTenantsAreAuditedOnce(t *testing.T) {
	in := newInbox()
	h := admin.Handler(in, &admin.Options{Token: "right"})
	for range 5 {
		do(h, "GET", "/admin/v1/approvals", "right", "")
	}
	if len(in.audited) != 1 {
		t.Fatalf("%d rows after five identical reads, want 1: %+v", len(in.audited), in.audited)
	}
	delete(in.m, "a2")
	do(h, "GET", "/admin/v1/approvals", "right", "")
	do(h, "GET", "/admin/v1/approvals/a1", "right", "")
	if len(in.audited) != 2 {
		t.Fatalf("%d rows after a read seeing less, want 2: %+v", len(in.audited), in.audited)
	}
}

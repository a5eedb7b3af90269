package stripe_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
)

func names(tools []connectors.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// The defaults leave catalog out; toolsets and read_only select; an
// unknown toolset is refused naming the known ones; the classes are the
// README's.
func TestToolsetsSelect(t *testing.T) {
	f := newFront(t)
	def := names(build(t, f, "stripe", "toolsets: []").c.Tools())
	if slices.Contains(def, "create_payment_link") || !slices.Contains(def, "search") || !slices.Contains(def, "cancel_subscription") || len(def) != 20 {
		t.Fatalf("default tools %v", def)
	}
	withCatalog := names(build(t, f, "stripe", "toolsets: [default, catalog]").c.Tools())
	if len(withCatalog) != 25 {
		t.Fatalf("default and catalog: %v", withCatalog)
	}
	billing := build(t, f, "stripe", "toolsets: [billing]\nread_only: true").c.Tools()
	if got := strings.Join(names(billing), ","); got != "list_invoices,get_invoice,list_subscriptions,get_subscription" {
		t.Fatalf("billing, read-only: %s", got)
	}
	ct, _ := connectors.Lookup("stripe")
	bad, err := connectors.Build(ct, "stripe", yamlNode(t, "toolsets: [refunds]"), "c")
	if err == nil {
		err = bad.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "customers (default)") {
		t.Fatalf("unknown toolset: %v", err)
	}
	classes := map[string]legate.Class{}
	for _, tool := range catalogOf(t, build(t, f, "stripe", "")) {
		classes[tool.Name] = tool.Class
		if !strings.HasPrefix(tool.Name, "list_") && !strings.HasPrefix(tool.Name, "get_") && tool.Name != "search" && tool.Class == legate.ClassRead {
			t.Errorf("%s reads only?", tool.Name)
		}
		if tool.Class != legate.ClassRead && !strings.Contains(tool.Description, saas.OnceNote) {
			t.Errorf("%s: its description does not say it writes once", tool.Name)
		}
	}
	if classes["cancel_subscription"] != legate.ClassDestructive || classes["update_subscription"] != legate.ClassWrite || classes["search"] != legate.ClassRead {
		t.Fatalf("classes %v", classes)
	}
}

// Arguments the connector refuses are refused before any request, with
// INVALID_ARGUMENT (NOT_FOUND for a ref that is not this instance's).
func TestBadArgumentsSendNothing(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "")
	other := build(t, f, "stripe-2", "")
	foreign := decode[saas.List[struct{ Ref string }]](t, other.do(t, "t1", "search", `{"object":"invoices","query":"status:'open'"}`, "")).Items[0].Ref
	before := f.count()
	for _, c := range []struct {
		tool, args string
		code       legate.Code
	}{
		{"list_customers", `{"email":"not an address"}`, legate.CodeInvalidArgument},
		{"create_customer", `{}`, legate.CodeInvalidArgument},
		{"create_customer", `{"email":"a@b.c","metadata":{"a[b]":"c"}}`, legate.CodeInvalidArgument},
		{"get_payment_intent", `{"payment_intent":""}`, legate.CodeInvalidArgument},
		{"get_payment_intent", `{"payment_intent":"../v1/charges"}`, legate.CodeNotFound},
		{"list_invoices", `{"status":"late"}`, legate.CodeInvalidArgument},
		{"get_invoice", fmt.Sprintf(`{"invoice":%q}`, foreign), legate.CodeNotFound},
		{"create_invoice", `{"customer":"cus_1","items":[]}`, legate.CodeInvalidArgument},
		{"create_invoice", `{"customer":"cus_1","items":[{"amount":100,"description":"x"}]}`, legate.CodeInvalidArgument},
		{"create_invoice", `{"customer":"cus_1","currency":"usd","items":[{"amount":100,"price":"price_1"}]}`, legate.CodeInvalidArgument},
		{"create_invoice", `{"customer":"cus_1","currency":"usd","collection_method":"cash","items":[{"price":"price_1"}]}`, legate.CodeInvalidArgument},
		{"finalize_invoice", `{"invoice":"sub_1"}`, legate.CodeNotFound},
		{"list_subscriptions", `{"status":"gone"}`, legate.CodeInvalidArgument},
		{"update_subscription", `{"subscription":"sub_1"}`, legate.CodeInvalidArgument},
		{"update_subscription", `{"subscription":"sub_1","items":[{"id":"price_1","quantity":2}]}`, legate.CodeInvalidArgument},
		{"update_subscription", `{"subscription":"sub_1","proration_behavior":"sometimes"}`, legate.CodeInvalidArgument},
		{"cancel_subscription", `{"subscription":""}`, legate.CodeInvalidArgument},
		{"search", `{"object":"refunds","query":"x"}`, legate.CodeInvalidArgument},
		{"search", `{"object":"customers","query":" "}`, legate.CodeInvalidArgument},
		{"create_price", `{"product":"prod_1","unit_amount":100,"currency":"dollars"}`, legate.CodeInvalidArgument},
		{"create_price", `{"product":"prod_1","unit_amount":100,"currency":"usd","interval":"fortnight"}`, legate.CodeInvalidArgument},
		{"create_product", `{"name":"  "}`, legate.CodeInvalidArgument},
		{"create_payment_link", `{"items":[]}`, legate.CodeInvalidArgument},
		{"list_prices", `{"type":"monthly"}`, legate.CodeInvalidArgument},
	} {
		_, err := in.call(t, "t1", c.tool, c.args, "op-bad")
		if legate.CodeOf(err) != c.code {
			t.Errorf("%s %s: %v; want %s", c.tool, c.args, err, c.code)
		}
	}
	if f.count() != before {
		t.Fatalf("%d requests sent for refused arguments", f.count()-before)
	}
}

// Every list tool's cursor is refused for another tenant, instance or
// tool before any request, and every list's limit is cut to 100.
func TestListCursorsAndLimits(t *testing.T) {
	lists := map[string]struct{ path, args string }{
		"list_customers":       {"/v1/customers", `"email":"odd@example.com"`},
		"list_charges":         {"/v1/charges", `"customer":"cus_odd"`},
		"list_payment_intents": {"/v1/payment_intents", `"customer":"cus_odd"`},
		"list_invoices":        {"/v1/invoices", `"status":"open"`},
		"list_subscriptions":   {"/v1/subscriptions", `"status":"all"`},
		"list_disputes":        {"/v1/disputes", `"charge":"ch_odd"`},
		"list_products":        {"/v1/products", `"active":true`},
		"list_prices":          {"/v1/prices", `"type":"recurring"`},
		"search":               {"/v1/invoices", `"object":"invoices","query":"status:'open'"`},
	}
	for tool, l := range lists {
		t.Run(tool, func(t *testing.T) {
			f := newFront(t)
			f.seed(t, l.path, 9)
			a, b := build(t, f, "stripe", ""), build(t, f, "stripe-2", "")
			page := decode[saas.List[struct{ Ref string }]](t, a.do(t, "t1", tool, fmt.Sprintf(`{%s,"limit":2}`, l.args), ""))
			if page.NextCursor == "" {
				t.Fatal("no next_cursor")
			}
			next := fmt.Sprintf(`{%s,"cursor":%q}`, l.args, page.NextCursor)
			before := f.count()
			_, err := a.call(t, "t2", tool, next, "")
			wantCode(t, err, legate.CodeInvalidArgument)
			_, err = b.call(t, "t1", tool, next, "")
			wantCode(t, err, legate.CodeInvalidArgument)
			otherTool := "list_charges"
			if tool == otherTool {
				otherTool = "list_customers"
			}
			_, err = a.call(t, "t1", otherTool, fmt.Sprintf(`{"cursor":%q}`, page.NextCursor), "")
			wantCode(t, err, legate.CodeInvalidArgument)
			if f.count() != before {
				t.Fatalf("%d requests sent for refused cursors", f.count()-before)
			}
			if _, err := a.call(t, "t1", tool, fmt.Sprintf(`{%s,"limit":5000}`, l.args), ""); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			last := f.requests[len(f.requests)-1]
			f.mu.Unlock()
			if !strings.Contains(last.Query, "limit=100") {
				t.Fatalf("query %q; want limit=100", last.Query)
			}
		})
	}
}

// The connection test reads only what the offered toolsets need, and
// names their writes.
func TestConnectionTestFollowsTheToolsets(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "toolsets: [customers, balance]")
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	if err := in.c.Test(ctx, connectortest.Creds{"secret_key": key}); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(lines, "\n")
	if !strings.Contains(out, "GET /v1/customers?limit=1: ok    Customers read, needed by get_customer, list_customers, create_customer\n") ||
		strings.Contains(out, "/v1/charges") || strings.Contains(out, "/v1/invoices") ||
		!strings.HasSuffix(out, "a restricted key needs the write permission of each of create_customer") {
		t.Fatalf("report:\n%s", out)
	}
	ro := build(t, f, "stripe", "toolsets: [catalog]\nread_only: true")
	lines = nil
	if err := ro.c.Test(ctx, connectortest.Creds{"secret_key": key}); err != nil {
		t.Fatal(err)
	}
	if out := strings.Join(lines, "\n"); strings.Contains(out, "write permissions") || !strings.HasSuffix(out, "Prices read, needed by list_prices") || strings.Contains(out, "/v1/payment_links") {
		t.Fatalf("read-only report:\n%s", out)
	}
}

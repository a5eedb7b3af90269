package stripe_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/stripe"
	"github.com/legate-mcp/legate/connectors/stripe/billing"
	"github.com/legate-mcp/legate/connectors/stripe/catalog"
)

// toolCase calls one tool against the stand-in and checks what it did.
type toolCase func(t *testing.T, f *front, in *instance)

// form is the body of the requests of method to path, decoded; it fails
// unless they all carried one idempotency key and one reached
// stripe-mock (the others, retries, got its outcome replayed).
func form(t *testing.T, f *front, method, path string) url.Values {
	t.Helper()
	reqs := f.requestsTo(method, path)
	if len(reqs) == 0 || !strings.HasPrefix(reqs[0].Idempotency, "lg1-") {
		t.Fatalf("%s %s: %+v; want requests with an idempotency key", method, path, reqs)
	}
	for _, r := range reqs {
		if r.Idempotency != reqs[0].Idempotency || r.Body != reqs[0].Body {
			t.Fatalf("%s %s: %+v; want one key and one body", method, path, reqs)
		}
	}
	f.mu.Lock()
	n := f.forwarded[reqs[0].Idempotency]
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("%s %s reached stripe-mock %d times", method, path, n)
	}
	v, err := url.ParseQuery(reqs[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// query is the query of the first request of GET path.
func query(t *testing.T, f *front, path string) url.Values {
	t.Helper()
	reqs := f.requestsTo(http.MethodGet, path)
	if len(reqs) == 0 {
		t.Fatalf("no GET %s", path)
	}
	v, _ := url.ParseQuery(reqs[0].Query)
	return v
}

// toolCases has a case for every tool of the type (TestEveryToolHasACase).
var toolCases = map[string]toolCase{
	"get_customer": func(t *testing.T, f *front, in *instance) {
		byID := decode[model.Customer](t, in.do(t, "t1", "get_customer", `{"customer":"cus_Q1"}`, ""))
		byRef := decode[model.Customer](t, in.do(t, "t1", "get_customer", fmt.Sprintf(`{"customer":%q}`, byID.Ref), ""))
		if byID.ExternalID != "cus_Q1" || byRef.ExternalID != "cus_Q1" || byID.Contract != "customer.v1" {
			t.Fatalf("by id %+v, by ref %+v", byID, byRef)
		}
	},
	"list_customers": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/customers", 14)
		items := walk[model.Customer](t, in, "list_customers", `"email":"odd@example.com"`, 3)
		if len(items) != 7 || items[0].Email != "odd@example.com" || items[0].ExternalID != "cus_0013" || query(t, f, "/v1/customers").Get("email") != "odd@example.com" {
			t.Fatalf("%d customers: %+v", len(items), items)
		}
	},
	"create_customer": func(t *testing.T, f *front, in *instance) {
		cu := decode[model.Customer](t, in.do(t, "t1", "create_customer", `{"email":"jenny@example.com","name":"Jenny Rosen","metadata":{"crm_id":"42"}}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/customers")
		if !strings.HasPrefix(cu.ExternalID, "cus_") || body.Get("email") != "jenny@example.com" || body.Get("name") != "Jenny Rosen" || body.Get("metadata[crm_id]") != "42" {
			t.Fatalf("customer %+v from %v", cu, body)
		}
	},
	"list_charges": func(t *testing.T, f *front, in *instance) {
		f.seedCharges(t, 7)
		items := walk[model.Charge](t, in, "list_charges", `"customer":"cus_odd"`, 2)
		if len(items) != 4 || items[0].ExternalID != "ch_0007" || items[0].Amount != 1007 {
			t.Fatalf("%+v", items)
		}
	},
	"list_payment_intents": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/payment_intents", 7)
		items := walk[stripe.PaymentIntent](t, in, "list_payment_intents", `"customer":"cus_odd"`, 2)
		if len(items) != 4 || items[0].Amount.Display != "10.07 usd" || items[0].CustomerRef == "" || query(t, f, "/v1/payment_intents").Get("customer") != "cus_odd" {
			t.Fatalf("%+v", items)
		}
	},
	"get_payment_intent": func(t *testing.T, f *front, in *instance) {
		pi := decode[stripe.PaymentIntent](t, in.do(t, "t1", "get_payment_intent", `{"payment_intent":"pi_123"}`, ""))
		if pi.ExternalID != "pi_123" || pi.Amount.Amount != 1099 || pi.Amount.Display != "10.99 usd" || pi.Status == "" {
			t.Fatalf("%+v", pi)
		}
	},
	"create_refund": func(t *testing.T, f *front, in *instance) {
		r := decode[model.Refund](t, in.do(t, "t1", "create_refund", `{"charge":"ch_123","amount":250}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/refunds")
		if r.ExternalID != "re_front000001" || body.Get("charge") != "ch_123" || body.Get("amount") != "250" {
			t.Fatalf("refund %+v from %v", r, body)
		}
	},
	"list_invoices": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/invoices", 7)
		items := walk[billing.Invoice](t, in, "list_invoices", `"status":"open"`, 3)
		if len(items) != 7 || items[0].ExternalID != "in_0007" || items[0].Total.Display == "" || query(t, f, "/v1/invoices").Get("status") != "open" {
			t.Fatalf("%+v", items)
		}
	},
	"get_invoice": func(t *testing.T, f *front, in *instance) {
		inv := decode[billing.Invoice](t, in.do(t, "t1", "get_invoice", `{"invoice":"in_123"}`, ""))
		if inv.ExternalID != "in_123" || len(inv.Lines) == 0 || inv.AmountDue.Display != "10.00 usd" || inv.CustomerRef == "" {
			t.Fatalf("%+v", inv)
		}
	},
	"create_invoice": func(t *testing.T, f *front, in *instance) {
		inv := decode[billing.Invoice](t, in.do(t, "t1", "create_invoice",
			`{"customer":"cus_123","currency":"usd","items":[{"description":"Setup","amount":5000},{"price":"price_123","quantity":2}],"days_until_due":14}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/invoices")
		items := f.requestsTo(http.MethodPost, "/v1/invoiceitems")
		if len(items) < 2 || body.Get("customer") != "cus_123" || body.Get("collection_method") != "send_invoice" || body.Get("days_until_due") != "14" || body.Get("auto_advance") != "false" {
			t.Fatalf("invoice %v, items %+v", body, items)
		}
		first, _ := url.ParseQuery(items[0].Body)
		second, _ := url.ParseQuery(items[1].Body)
		if first.Get("amount") != "5000" || first.Get("currency") != "usd" || first.Get("invoice") != inv.ExternalID || second.Get("pricing[price]") != "price_123" || second.Get("quantity") != "2" ||
			items[0].Idempotency == items[1].Idempotency || !strings.HasPrefix(items[0].Idempotency, f.requestsTo(http.MethodPost, "/v1/invoices")[0].Idempotency) {
			t.Fatalf("items %v and %v, keys %s, %s", first, second, items[0].Idempotency, items[1].Idempotency)
		}
	},
	"finalize_invoice": func(t *testing.T, f *front, in *instance) {
		inv := decode[billing.Invoice](t, in.do(t, "t1", "finalize_invoice", `{"invoice":"in_123"}`, "op-1"))
		form(t, f, http.MethodPost, "/v1/invoices/in_123/finalize")
		if inv.ExternalID == "" || inv.Status == "" {
			t.Fatalf("%+v", inv)
		}
	},
	"send_invoice": func(t *testing.T, f *front, in *instance) {
		inv := decode[billing.Invoice](t, in.do(t, "t1", "send_invoice", `{"invoice":"in_123"}`, "op-1"))
		form(t, f, http.MethodPost, "/v1/invoices/in_123/send")
		if inv.ExternalID == "" {
			t.Fatalf("%+v", inv)
		}
	},
	"list_subscriptions": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/subscriptions", 7)
		items := walk[billing.Subscription](t, in, "list_subscriptions", `"status":"all","customer":"cus_odd"`, 2)
		if len(items) != 4 || len(items[0].Items) == 0 || items[0].Items[0].UnitAmount.Display != "20.00 usd" || query(t, f, "/v1/subscriptions").Get("status") != "all" {
			t.Fatalf("%+v", items)
		}
	},
	"get_subscription": func(t *testing.T, f *front, in *instance) {
		s := decode[billing.Subscription](t, in.do(t, "t1", "get_subscription", `{"subscription":"sub_123"}`, ""))
		if s.ExternalID != "sub_123" || len(s.Items) == 0 || s.Items[0].Interval != "month" || !strings.HasPrefix(s.Items[0].ID, "si_") || s.CustomerRef == "" {
			t.Fatalf("%+v", s)
		}
	},
	"update_subscription": func(t *testing.T, f *front, in *instance) {
		s := decode[billing.Subscription](t, in.do(t, "t1", "update_subscription",
			`{"subscription":"sub_123","items":[{"id":"si_123","price":"price_456","quantity":3}],"proration_behavior":"none","cancel_at_period_end":false}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/subscriptions/sub_123")
		if s.ExternalID == "" || body.Get("items[0][id]") != "si_123" || body.Get("items[0][price]") != "price_456" || body.Get("items[0][quantity]") != "3" ||
			body.Get("proration_behavior") != "none" || body.Get("cancel_at_period_end") != "false" {
			t.Fatalf("%+v from %v", s, body)
		}
	},
	"cancel_subscription": func(t *testing.T, f *front, in *instance) {
		s := decode[billing.Subscription](t, in.do(t, "t1", "cancel_subscription", `{"subscription":"sub_123","prorate":true}`, "op-1"))
		// Another call finds it canceled and deletes nothing.
		again := decode[billing.Subscription](t, in.do(t, "t1", "cancel_subscription", `{"subscription":"sub_123"}`, "op-2"))
		dels := f.requestsTo(http.MethodDelete, "/v1/subscriptions/sub_123")
		if s.Status != "canceled" || again.Status != "canceled" || len(dels) != 1 || f.deletes["/v1/subscriptions/sub_123"] != 1 || dels[0].Query != "prorate=true" {
			t.Fatalf("%+v, then %+v; DELETEs %+v", s, again, dels)
		}
	},
	"list_disputes": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/disputes", 7)
		items := walk[stripe.Dispute](t, in, "list_disputes", `"charge":"ch_odd"`, 2)
		if len(items) != 4 || items[0].ChargeRef == "" || items[0].EvidenceDueBy.IsZero() || items[0].Amount.Display != "10.07 usd" {
			t.Fatalf("%+v", items)
		}
	},
	"get_dispute": func(t *testing.T, f *front, in *instance) {
		d := decode[stripe.Dispute](t, in.do(t, "t1", "get_dispute", `{"dispute":"dp_123"}`, ""))
		if d.ExternalID != "dp_123" || d.Reason == "" || d.Status == "" || d.ChargeRef == "" {
			t.Fatalf("%+v", d)
		}
	},
	"get_balance": func(t *testing.T, f *front, in *instance) {
		b := decode[stripe.Balance](t, in.do(t, "t1", "get_balance", `{}`, ""))
		if len(b.Available) == 0 || b.Available[0].Display != "0.00 usd" || len(b.Pending) == 0 {
			t.Fatalf("%+v", b)
		}
	},
	"search": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/customers", 7)
		items := walk[stripe.Hit](t, in, "search", `"object":"customers","query":"email:'odd@example.com'"`, 3)
		q := query(t, f, "/v1/customers/search")
		if len(items) != 7 || items[0].Kind != "customer" || items[0].Title == "" || q.Get("query") != "email:'odd@example.com'" {
			t.Fatalf("%+v after %v", items, q)
		}
		// A hit's ref is the object's: get_customer takes it.
		cu := decode[model.Customer](t, in.do(t, "t1", "get_customer", fmt.Sprintf(`{"customer":%q}`, items[0].Ref), ""))
		if cu.ExternalID != items[0].ExternalID {
			t.Fatalf("ref of %s names %s", items[0].ExternalID, cu.ExternalID)
		}
		f.seed(t, "/v1/prices", 3)
		prices := decode[saas.List[stripe.Hit]](t, in.do(t, "t1", "search", `{"object":"prices","query":"active:'true'"}`, ""))
		if len(prices.Items) != 3 || prices.Items[0].Amount == nil || prices.Items[0].Amount.Display != "20.00 usd" {
			t.Fatalf("%+v", prices)
		}
	},
	"list_products": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/products", 7)
		items := walk[catalog.Product](t, in, "list_products", `"active":true`, 3)
		if len(items) != 7 || items[0].Name == "" || query(t, f, "/v1/products").Get("active") != "true" {
			t.Fatalf("%+v", items)
		}
	},
	"create_product": func(t *testing.T, f *front, in *instance) {
		p := decode[catalog.Product](t, in.do(t, "t1", "create_product", `{"name":"Pro plan","description":"Everything"}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/products")
		if p.ExternalID == "" || body.Get("name") != "Pro plan" || body.Get("description") != "Everything" {
			t.Fatalf("%+v from %v", p, body)
		}
	},
	"list_prices": func(t *testing.T, f *front, in *instance) {
		f.seed(t, "/v1/prices", 7)
		items := walk[catalog.Price](t, in, "list_prices", `"type":"recurring"`, 3)
		if len(items) != 7 || items[0].UnitAmount == nil || items[0].Interval != "month" || query(t, f, "/v1/prices").Get("type") != "recurring" {
			t.Fatalf("%+v", items)
		}
	},
	"create_price": func(t *testing.T, f *front, in *instance) {
		p := decode[catalog.Price](t, in.do(t, "t1", "create_price", `{"product":"prod_123","unit_amount":1500,"currency":"EUR","interval":"month"}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/prices")
		if p.ExternalID == "" || body.Get("product") != "prod_123" || body.Get("unit_amount") != "1500" || body.Get("currency") != "eur" || body.Get("recurring[interval]") != "month" {
			t.Fatalf("%+v from %v", p, body)
		}
	},
	"create_payment_link": func(t *testing.T, f *front, in *instance) {
		l := decode[catalog.PaymentLink](t, in.do(t, "t1", "create_payment_link", `{"items":[{"price":"price_123","quantity":2}]}`, "op-1"))
		body := form(t, f, http.MethodPost, "/v1/payment_links")
		if !strings.HasPrefix(l.URL, "https://") || body.Get("line_items[0][price]") != "price_123" || body.Get("line_items[0][quantity]") != "2" {
			t.Fatalf("%+v from %v", l, body)
		}
	},
}

// walk reads every page of a list tool at 3 items a page and returns the
// items; it fails unless there are at least minPages pages.
func walk[T any](t *testing.T, in *instance, tool, args string, minPages int) []T {
	t.Helper()
	var all []T
	cursor, pages := "", 0
	for {
		a := fmt.Sprintf(`{%s,"limit":3}`, args)
		if cursor != "" {
			a = fmt.Sprintf(`{%s,"limit":3,"cursor":%q}`, args, cursor)
		}
		l := decode[saas.List[T]](t, in.do(t, "t1", tool, a, ""))
		all = append(all, l.Items...)
		if pages++; l.NextCursor == "" || pages > 100 {
			break
		}
		cursor = l.NextCursor
	}
	if pages < minPages {
		t.Fatalf("%s: %d pages; want %d or more", tool, pages, minPages)
	}
	return all
}

// Every tool of the type does its job against the stand-in.
func TestEveryToolAgainstTheStandin(t *testing.T) {
	for name, run := range toolCases {
		t.Run(name, func(t *testing.T) {
			f := newFront(t)
			run(t, f, build(t, f, "stripe", ""))
		})
	}
}

// Every tool of the catalog has a case, so a tool added later is tested.
func TestEveryToolHasACase(t *testing.T) {
	for _, tool := range catalogOf(t, build(t, newFront(t), "stripe", "")) {
		if toolCases[tool.Name] == nil {
			t.Errorf("tool %s has no case in toolCases", tool.Name)
		}
	}
}

// catalogOf is every tool of the type.
func catalogOf(t *testing.T, in *instance) []connectors.Tool {
	t.Helper()
	tc, ok := in.c.(connectors.ToolCatalog)
	if !ok {
		t.Fatal("the connector lists no tool catalog")
	}
	return tc.ToolCatalog()
}

package stripe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stripe/stripe-go/v82"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	_ "github.com/legate-mcp/legate/connectors/stripe"
)

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{
		Type:        "stripe",
		Config:      "base_url: http://127.0.0.1:9\nallow_private_networks: true",
		Credentials: map[string]string{"secret_key": key},
	})
}

func TestConfigIsValidated(t *testing.T) {
	tests := map[string]string{
		"base_url with a path":    "base_url: https://api.stripe.com/v1",
		"base_url not http":       "base_url: ftp://api.stripe.com",
		"base_url on loopback":    "base_url: http://127.0.0.1:12111",
		"unknown mode":            "mode: sandbox",
		"too many attempts":       "max_attempts: 11",
		"no timeout":              "timeout: 0s",
		"negative max_retry_wait": "max_retry_wait: -1s",
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			ct, _ := connectors.Lookup("stripe")
			c, err := connectors.Build(ct, "stripe", yamlNode(t, cfg), "c")
			if err == nil {
				err = c.Validate()
			}
			if err == nil {
				t.Fatalf("%q accepted", cfg)
			}
		})
	}
}

type instance struct {
	c   connectors.Connector
	key []byte
	ops connectors.Operations
}

// build builds an instance on f with extra config.
func build(t testing.TB, f *front, id, extra string) *instance {
	t.Helper()
	cfg := fmt.Sprintf("base_url: %s\nallow_private_networks: true\nretry_backoff: 1ms\n%s", f.srv.URL, extra)
	if !strings.Contains(extra, "toolsets:") {
		cfg += "\ntoolsets: [all]"
	}
	return &instance{c: connectortest.Build(t, "stripe", id, cfg), key: []byte("key of " + id), ops: saas.NewMemoryOperations()}
}

func (in *instance) tool(t testing.TB, name string) connectors.Tool {
	t.Helper()
	for _, tl := range in.c.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return connectors.Tool{}
}

func (in *instance) callWith(t testing.TB, secret, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return in.tool(t, tool).Run(context.Background(), &connectors.Call{
		Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
		Credentials: connectortest.Creds{"secret_key": secret}, OperationID: op,
		Key: func() []byte { return in.key }, Operations: in.ops,
	})
}

func (in *instance) call(t testing.TB, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return in.callWith(t, key, tenant, tool, args, op)
}

type outcome struct {
	res *legate.Result
	err error
}

// do calls tool and checks a result against the tool's output schema, as
// a client does.
func (in *instance) do(t testing.TB, tenant, tool, args, op string) outcome {
	t.Helper()
	res, err := in.call(t, tenant, tool, args, op)
	if err == nil {
		checkSchema(t, in.tool(t, tool), res)
	}
	return outcome{res, err}
}

// checkSchema fails unless res's structured content validates against
// tool's output schema.
func checkSchema(t testing.TB, tool connectors.Tool, res *legate.Result) {
	t.Helper()
	var schema jsonschema.Schema
	if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	b, _ := json.Marshal(res.Structured)
	var v any
	json.Unmarshal(b, &v)
	if err := resolved.Validate(v); err != nil {
		t.Fatalf("%s: the result does not match the output schema: %v\n%s", tool.Name, err, b)
	}
}

func decode[T any](t testing.TB, o outcome) T {
	t.Helper()
	if o.err != nil {
		t.Fatal(o.err)
	}
	b, _ := json.Marshal(o.res.Structured)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t testing.TB, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

func TestGetCustomerByIDOrRef(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "")
	byID := decode[model.Customer](t, in.do(t, "t1", "get_customer", `{"customer_id":"cus_Q1"}`, ""))
	if byID.Contract != "customer.v1" || byID.ExternalID != "cus_Q1" || byID.Provider != "stripe" || byID.Instance != "stripe" ||
		!strings.HasPrefix(byID.Ref, "customer://") || byID.URL != "https://dashboard.stripe.com/test/customers/cus_Q1" || byID.CreatedAt.IsZero() {
		t.Fatalf("customer %+v", byID)
	}
	if byID.ProviderMetadata["livemode"] != false {
		t.Errorf("provider_metadata %v", byID.ProviderMetadata)
	}
	byRef := decode[model.Customer](t, in.do(t, "t1", "get_customer", fmt.Sprintf(`{"customer":%q}`, byID.Ref), ""))
	if byRef.Ref != byID.Ref || byRef.ExternalID != "cus_Q1" {
		t.Fatalf("by ref %+v", byRef)
	}
	for _, s := range f.requestsTo(http.MethodGet, "/v1/customers/cus_Q1") {
		if s.Auth != "Bearer "+key || s.Account != "" {
			t.Errorf("request with Authorization %q, Stripe-Account %q; want the key and no account", s.Auth, s.Account)
		}
	}
	if n := len(f.requestsTo(http.MethodGet, "/v1/customers/cus_Q1")); n != 2 {
		t.Errorf("%d requests; want 2", n)
	}
	for args, code := range map[string]legate.Code{
		`{}`:                                     legate.CodeInvalidArgument,
		`{"customer_id":"../v1/charges"}`:        legate.CodeInvalidArgument,
		`{"customer_id":"cus_1","customer":"x"}`: legate.CodeInvalidArgument,
		`{"customer":"customer://forged.sig"}`:   legate.CodeNotFound,
	} {
		_, err := in.call(t, "t1", "get_customer", args, "")
		wantCode(t, err, code)
	}
}

func TestListChargesFromStripeMock(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "")
	l := decode[saas.List[model.Charge]](t, in.do(t, "t1", "list_charges", `{}`, ""))
	if len(l.Items) == 0 || l.NextCursor != "" {
		t.Fatalf("list %+v", l)
	}
	ch := l.Items[0]
	if ch.Contract != "charge.v1" || ch.ExternalID == "" || ch.Currency == "" || ch.Status == "" || ch.CreatedAt.IsZero() {
		t.Fatalf("charge %+v", ch)
	}
	if q := f.requestsTo(http.MethodGet, "/v1/charges")[0].Query; q != "limit=25" {
		t.Errorf("query %q; want the default limit", q)
	}
}

func TestListChargesWalksPagesByCursor(t *testing.T) {
	f := newFront(t)
	f.seedCharges(t, 7)
	in := build(t, f, "stripe", "")
	var ids []string
	var customerRef string
	cursor, pages := "", 0
	for {
		args := `{"limit":2}`
		if cursor != "" {
			args = fmt.Sprintf(`{"limit":2,"cursor":%q}`, cursor)
		}
		l := decode[saas.List[model.Charge]](t, in.do(t, "t1", "list_charges", args, ""))
		pages++
		for _, ch := range l.Items {
			ids = append(ids, ch.ExternalID)
			if ch.CustomerRef == "" || ch.Amount < 1000 {
				t.Errorf("charge %+v", ch)
			}
			if ch.ExternalID == "ch_0007" {
				customerRef = ch.CustomerRef
			}
		}
		if l.NextCursor == "" {
			break
		}
		if strings.Contains(l.NextCursor, "ch_") {
			t.Fatalf("next_cursor %q shows Stripe's id", l.NextCursor)
		}
		cursor = l.NextCursor
	}
	if pages != 4 || strings.Join(ids, ",") != "ch_0007,ch_0006,ch_0005,ch_0004,ch_0003,ch_0002,ch_0001" {
		t.Fatalf("%d pages: %v", pages, ids)
	}
	var queries []string
	for _, s := range f.requestsTo(http.MethodGet, "/v1/charges") {
		queries = append(queries, s.Query)
	}
	if want := "limit=2,limit=2&starting_after=ch_0006,limit=2&starting_after=ch_0004,limit=2&starting_after=ch_0002"; strings.Join(queries, ",") != want {
		t.Errorf("queries %v; want %s", queries, want)
	}
	// The customer's ref filters the list: ch_0007 is cus_odd's.
	l := decode[saas.List[model.Charge]](t, in.do(t, "t1", "list_charges", fmt.Sprintf(`{"customer":%q,"limit":100}`, customerRef), ""))
	if len(l.Items) != 4 || l.Items[0].ExternalID != "ch_0007" || l.Items[3].ExternalID != "ch_0001" {
		t.Fatalf("cus_odd's charges: %+v", l.Items)
	}
	cu := decode[model.Customer](t, in.do(t, "t1", "get_customer", fmt.Sprintf(`{"customer":%q}`, customerRef), ""))
	if cu.ExternalID != "cus_odd" {
		t.Errorf("customer_ref names %s", cu.ExternalID)
	}
}

func TestLimitIsBounded(t *testing.T) {
	f := newFront(t)
	f.seedCharges(t, 3)
	in := build(t, f, "stripe", "")
	if _, err := in.call(t, "t1", "list_charges", `{"limit":5000}`, ""); err != nil {
		t.Fatal(err)
	}
	if q := f.requestsTo(http.MethodGet, "/v1/charges")[0].Query; q != "limit=100" {
		t.Errorf("query %q; want limit=100", q)
	}
	_, err := in.call(t, "t1", "list_charges", `{"limit":-1}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
}

func TestCursorsAndRefsStayWhereTheyWereMade(t *testing.T) {
	f := newFront(t)
	f.seedCharges(t, 5)
	a, b := build(t, f, "stripe", ""), build(t, f, "stripe-2", "")
	l := decode[saas.List[model.Charge]](t, a.do(t, "t1", "list_charges", `{"limit":2}`, ""))
	cursor := fmt.Sprintf(`{"cursor":%q}`, l.NextCursor)
	if _, err := a.call(t, "t1", "list_charges", cursor, ""); err != nil {
		t.Fatal(err)
	}
	before := f.count()
	_, err := a.call(t, "t2", "list_charges", cursor, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = b.call(t, "t1", "list_charges", cursor, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	// A cursor is not a customer ref, nor a ref a cursor.
	_, err = a.call(t, "t1", "get_customer", fmt.Sprintf(`{"customer":%q}`, l.NextCursor), "")
	wantCode(t, err, legate.CodeNotFound)
	customer := fmt.Sprintf(`{"customer":%q}`, l.Items[0].CustomerRef)
	_, err = a.call(t, "t2", "get_customer", customer, "")
	wantCode(t, err, legate.CodeNotFound)
	_, err = b.call(t, "t1", "get_customer", customer, "")
	wantCode(t, err, legate.CodeNotFound)
	charge := fmt.Sprintf(`{"charge":%q}`, l.Items[0].Ref)
	_, err = a.call(t, "t2", "create_refund", charge, "op-1")
	wantCode(t, err, legate.CodeNotFound)
	_, err = b.call(t, "t1", "create_refund", charge, "op-2")
	wantCode(t, err, legate.CodeNotFound)
	if f.count() != before {
		t.Fatalf("%d requests sent for refused cursors and refs", f.count()-before)
	}
}

func TestCreateRefund(t *testing.T) {
	f := newFront(t)
	f.seedCharges(t, 2)
	in := build(t, f, "stripe", "")
	l := decode[saas.List[model.Charge]](t, in.do(t, "t1", "list_charges", `{}`, ""))
	args := fmt.Sprintf(`{"charge":%q,"amount":250,"reason":"requested_by_customer"}`, l.Items[0].Ref)
	r := decode[model.Refund](t, in.do(t, "t1", "create_refund", args, "op-1"))
	if r.Contract != "refund.v1" || r.ExternalID != "re_front000001" || r.Currency == "" || r.Status == "" || !strings.HasPrefix(r.Ref, "refund://") {
		t.Fatalf("refund %+v", r)
	}
	posts := f.requestsTo(http.MethodPost, "/v1/refunds")
	if len(posts) != 1 {
		t.Fatalf("%d POST /v1/refunds", len(posts))
	}
	form, _ := url.ParseQuery(posts[0].Body)
	if form.Get("charge") != "ch_0002" || form.Get("amount") != "250" || form.Get("reason") != "requested_by_customer" ||
		!strings.HasPrefix(posts[0].Idempotency, "lg1-") || posts[0].Account != "" {
		t.Fatalf("request %+v", posts[0])
	}
	// The same call again is answered from the operation record.
	again := decode[model.Refund](t, in.do(t, "t1", "create_refund", args, "op-1"))
	if again.Ref != r.Ref || len(f.requestsTo(http.MethodPost, "/v1/refunds")) != 1 {
		t.Fatalf("replay %+v", again)
	}
	// Another call refunds again, under another key.
	byID := decode[model.Refund](t, in.do(t, "t1", "create_refund", `{"charge_id":"ch_0001"}`, "op-2"))
	posts = f.requestsTo(http.MethodPost, "/v1/refunds")
	if byID.ExternalID != "re_front000002" || len(posts) != 2 || posts[1].Idempotency == posts[0].Idempotency {
		t.Fatalf("second refund %+v after %+v", byID, posts)
	}
	for args, code := range map[string]legate.Code{
		`{}`:                                    legate.CodeInvalidArgument,
		`{"charge_id":"cus_1"}`:                 legate.CodeInvalidArgument,
		`{"charge_id":"ch_1","amount":-5}`:      legate.CodeInvalidArgument,
		`{"charge_id":"ch_1","reason":"angry"}`: legate.CodeInvalidArgument,
	} {
		_, err := in.call(t, "t1", "create_refund", args, "op-bad")
		wantCode(t, err, code)
	}
	_, err := in.call(t, "t1", "create_refund", `{"charge_id":"ch_1"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument) // no idempotency key
	if n := len(f.requestsTo(http.MethodPost, "/v1/refunds")); n != 2 {
		t.Fatalf("%d refunds sent; want 2", n)
	}
}

func TestModeRefusesKeysOfTheOtherMode(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "mode: live")
	_, err := in.call(t, "t1", "get_customer", `{"customer_id":"cus_1"}`, "")
	wantCode(t, err, legate.CodePermissionDenied)
	_, err = in.call(t, "t1", "create_refund", `{"charge_id":"ch_1"}`, "op-1")
	wantCode(t, err, legate.CodePermissionDenied)
	if f.count() != 0 {
		t.Fatalf("%d requests sent with a key of the other mode", f.count())
	}
	test := build(t, f, "stripe", "mode: test")
	if _, err := test.call(t, "t1", "get_customer", `{"customer_id":"cus_1"}`, ""); err != nil {
		t.Fatal(err)
	}
}

// stripeError answers as Stripe does when it refuses a request.
func stripeError(status int, code, msg string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { writeError(w, status, code, "", msg) }
}

func TestRateLimitIsWaitedThenSucceeds(t *testing.T) {
	tests := map[string]func(w http.ResponseWriter){
		"429 rate_limit": stripeError(429, "rate_limit", "Too many requests hit the API too quickly."),
		"429 with Retry-After": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			stripeError(429, "lock_timeout", "slow down")(w)
		},
	}
	for name, refuse := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFront(t)
			in := build(t, f, "stripe", "")
			f.fault = func(n int, w http.ResponseWriter, r *http.Request) bool {
				if n <= 2 {
					refuse(w)
					return true
				}
				return false
			}
			var retries []string
			res, err := in.tool(t, "get_customer").Run(context.Background(), &connectors.Call{
				Tool: "get_customer", Args: json.RawMessage(`{"customer_id":"cus_1"}`), Caller: connectors.Caller{Tenant: "t1"},
				Credentials: connectortest.Creds{"secret_key": key}, Retried: func(r string) { retries = append(retries, r) },
			})
			cu := decode[model.Customer](t, outcome{res, err})
			if cu.ExternalID != "cus_1" || f.count() != 3 || strings.Join(retries, ",") != "429,429" {
				t.Fatalf("%+v after %d requests, retries %v; want success on the third", cu, f.count(), retries)
			}
		})
	}
	t.Run("a wait past max_retry_wait is returned", func(t *testing.T) {
		f := newFront(t)
		in := build(t, f, "stripe", "")
		f.fault = func(n int, w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "3600")
			stripeError(429, "rate_limit", "slow down")(w)
			return true
		}
		_, err := in.call(t, "t1", "get_customer", `{"customer_id":"cus_1"}`, "")
		if le := wantCode(t, err, legate.CodeRateLimited); le.RetryAfter != time.Hour || f.count() != 1 {
			t.Errorf("RetryAfter %v after %d requests", le.RetryAfter, f.count())
		}
	})
}

// TestFailuresMapToTheirClass also shows that stripe-go retries nothing
// by itself (it would retry network errors, 5xx without a Stripe error,
// 429 lock_timeout and Stripe-Should-Retry): the requests made are the
// kit's.
func TestFailuresMapToTheirClass(t *testing.T) {
	body := func(status int, b string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(b))
		}
	}
	echo := "the request carried Bearer " + key
	tests := map[string]struct {
		answer   func(w http.ResponseWriter)
		code     legate.Code
		attempts int
	}{
		"401": {stripeError(401, "", "Invalid API Key provided: "+key), legate.CodeAuthExpired, 1},
		"403": {stripeError(403, "", "The provided key does not have the required permissions: "+echo), legate.CodePermissionDenied, 1},
		"404": {stripeError(404, "resource_missing", "No such customer: 'cus_1'; "+echo), legate.CodeNotFound, 1},
		"409": {func(w http.ResponseWriter) {
			w.Header().Set("Stripe-Should-Retry", "true")
			stripeError(409, "lock_timeout", echo)(w)
		}, legate.CodeConflict, 1},
		"400":                        {stripeError(400, "parameter_invalid", echo), legate.CodeInvalidArgument, 1},
		"500":                        {stripeError(500, "", echo), legate.CodeTransient, 3},
		"503 without a Stripe error": {body(503, `<html>`+echo+`</html>`), legate.CodeTransient, 3},
		"malformed body":             {body(200, `<html>`+echo+`</html>`), legate.CodeAdapterMapping, 1},
		"wrong type":                 {body(200, `{"id": 42}`), legate.CodeAdapterMapping, 1},
		"no id":                      {body(200, `{"object": "customer"}`), legate.CodeAdapterMapping, 1},
		"deleted customer":           {body(200, `{"id": "cus_1", "object": "customer", "deleted": true}`), legate.CodeNotFound, 1},
		"connection dropped":         {hangUp, legate.CodeTransient, 3},
		"429 lock_timeout":           {stripeError(429, "lock_timeout", echo), legate.CodeRateLimited, 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFront(t)
			in := build(t, f, "stripe", "")
			f.fault = func(n int, w http.ResponseWriter, r *http.Request) bool {
				tc.answer(w)
				return true
			}
			res, err := in.call(t, "t1", "get_customer", `{"customer_id":"cus_1"}`, "")
			le := wantCode(t, err, tc.code)
			if n := f.count(); n != tc.attempts {
				t.Errorf("%d requests; want %d", n, tc.attempts)
			}
			if !strings.HasPrefix(le.Message, "stripe: ") {
				t.Errorf("message %q", le.Message)
			}
			noKey(t, res, err)
		})
	}
}

// noKey fails if the canary shows in a result or an error.
func noKey(t testing.TB, res *legate.Result, err error, more ...string) {
	t.Helper()
	parts := more
	if res != nil {
		b, _ := json.Marshal(res.Structured)
		parts = append(parts, string(b), res.Text)
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		parts = append(parts, e.Error(), fmt.Sprintf("%+v", e))
	}
	for _, p := range parts {
		if strings.Contains(p, canary) {
			t.Fatalf("the key shows in %q", p)
		}
	}
}

func TestConnectionTestReports(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "")
	var facts connectors.Facts
	report := func(secret string) (string, error) {
		var lines []string
		facts = connectors.Facts{}
		ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
		err := in.c.Test(connectors.WithFacts(ctx, &facts), connectortest.Creds{"secret_key": secret})
		return strings.Join(lines, "\n"), err
	}
	out, err := report(key)
	if facts.Environment != connectors.EnvSandbox {
		t.Errorf("a test key's environment: %q, want sandbox", facts.Environment)
	}
	for _, want := range []string{
		"key: a secret key, test mode (from its prefix); API version " + stripe.APIVersion,
		"GET /v1/account: ok, acct_",
		"GET /v1/balance: ok, available",
		"GET /v1/customers?limit=1: ok    Customers read",
		"GET /v1/charges?limit=1: ok    Charges read",
		"GET /v1/refunds?limit=1: ok    Refunds read",
		"write permissions: not checked (it would write); a restricted key needs the write permission of each of create_customer, create_refund,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	noKey(t, nil, err, out)

	// A restricted key without Customers read.
	f.fault = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/v1/customers" || r.URL.Path == "/v1/account" {
			stripeError(403, "", "The provided key 'rk_test_***' does not have the required permissions")(w)
			return true
		}
		return false
	}
	out, err = report("rk_test_canary7f1c9a2b5e0d")
	wantCode(t, err, legate.CodePermissionDenied)
	for _, want := range []string{"key: a restricted key, test mode", "GET /v1/account: not permitted", "MISSING Customers read", "ok    Charges read"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// stripe-mock refuses a live key: 401.
	f.fault = nil
	out, err = report("sk_live_canary7f1c9a2b5e0d")
	wantCode(t, err, legate.CodeAuthExpired)
	if !strings.Contains(out, "live mode") || facts.Environment != connectors.EnvProduction {
		t.Errorf("environment %q, report:\n%s", facts.Environment, out)
	}
	noKey(t, nil, err, out)
}

// TestKeyNeverShows runs the calls whose answers quote the key (stripe-mock
// echoes the whole Authorization header in its 401; the front echoes it
// in other failures) and checks the key in no result, error, report, log
// line or standard error output, and in no request but as its
// Authorization.
func TestKeyNeverShows(t *testing.T) {
	stderr := captureLogs(t)
	f := newFront(t)
	in := build(t, f, "stripe", "max_attempts: 2")
	live := "sk_live_" + canary // stripe-mock refuses live keys with a 401 that quotes it
	res, err := in.callWith(t, live, "t1", "get_customer", `{"customer_id":"cus_1"}`, "")
	wantCode(t, err, legate.CodeAuthExpired)
	noKey(t, res, err)
	res, err = in.callWith(t, live, "t1", "create_refund", `{"charge_id":"ch_1"}`, "op-1")
	wantCode(t, err, legate.CodeAuthExpired)
	noKey(t, res, err)
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	err = in.c.Test(ctx, connectortest.Creds{"secret_key": live})
	noKey(t, nil, err, lines...)

	echo := "Bearer " + key
	answers := []func(w http.ResponseWriter){
		stripeError(403, "", echo),
		stripeError(500, "", echo),
		stripeError(402, "card_declined", echo),
		func(w http.ResponseWriter) { w.WriteHeader(200); w.Write([]byte("<html>" + echo)) },
		func(w http.ResponseWriter) { w.WriteHeader(502); w.Write([]byte("<html>" + echo)) },
	}
	for i, answer := range answers {
		f.fault = func(n int, w http.ResponseWriter, r *http.Request) bool { answer(w); return true }
		for tool, args := range someArgs() {
			res, err := in.call(t, "t1", tool, args, fmt.Sprintf("op-%d-%s", i+2, tool))
			if err == nil {
				t.Fatalf("%s succeeded", tool)
			}
			noKey(t, res, err)
		}
	}
	f.fault = nil
	res, err = in.call(t, "t1", "list_charges", `{}`, "")
	noKey(t, res, err)
	noKey(t, nil, nil, stderr()...)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.requests {
		if strings.Contains(s.Path+s.Query+s.Body+s.Idempotency+s.Account, canary) {
			t.Fatalf("the key was sent outside Authorization: %+v", s)
		}
	}
}

// captureLogs sends standard error, the log package and slog to a buffer
// until the test ends, and returns the function reading what they got.
func captureLogs(t *testing.T) func() []string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	done := make(chan struct{})
	go func() { io.Copy(&buf, r); close(done) }()
	oldErr, oldLog, oldSlog := os.Stderr, log.Writer(), slog.Default()
	os.Stderr = w
	log.SetOutput(w)
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})))
	restore := sync.OnceFunc(func() {
		os.Stderr = oldErr
		log.SetOutput(oldLog)
		slog.SetDefault(oldSlog)
		w.Close()
		<-done
	})
	t.Cleanup(restore)
	return func() []string {
		restore()
		return []string{buf.String()}
	}
}

// someArgs are arguments of every tool of the type.
func someArgs() map[string]string {
	args := map[string]string{
		"get_customer":       `{"customer_id":"cus_1"}`,
		"get_payment_intent": `{"payment_intent":"pi_1"}`,
		"get_invoice":        `{"invoice":"in_1"}`,
		"get_subscription":   `{"subscription":"sub_1"}`,
		"get_dispute":        `{"dispute":"dp_1"}`,
		"search":             `{"object":"charges","query":"amount>1000"}`,
	}
	for _, l := range []string{"get_balance", "list_customers", "list_charges", "list_payment_intents", "list_invoices", "list_subscriptions", "list_disputes", "list_products", "list_prices"} {
		args[l] = `{}`
	}
	for tool, a := range writeArgs {
		args[tool] = a
	}
	return args
}

// someArgs names every tool of the type.
func TestSomeArgsForEveryTool(t *testing.T) {
	args := someArgs()
	for _, tool := range catalogOf(t, build(t, newFront(t), "stripe", "")) {
		if args[tool.Name] == "" {
			t.Errorf("%s has no arguments in someArgs", tool.Name)
		}
	}
}

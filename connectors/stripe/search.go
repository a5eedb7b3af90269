package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/stripe/stcore"
)

// search is the search toolset: Stripe's search query language.
type search struct{ *stcore.Core }

// searchObject is an object Stripe searches, with the kind of its refs.
type searchObject struct {
	object string
	kind   stcore.Kind
}

// searchable are the objects Stripe searches.
var searchable = []searchObject{
	{"customers", stcore.Customer},
	{"charges", stcore.Charge},
	{"payment_intents", stcore.PaymentIntent},
	{"invoices", stcore.Invoice},
	{"subscriptions", stcore.Subscription},
	{"products", stcore.Product},
	{"prices", stcore.Price},
}

// MaxQuery bounds a search query (Stripe's own limit is 10,000
// characters).
const MaxQuery = 10000

// Hit is one object a search found: its kind, its ref (which the tools
// taking that kind accept), and what identifies it to people.
type Hit struct {
	model.Object
	Kind        string         `json:"kind" jsonschema:"customer, charge, payment_intent, invoice, subscription, product or price"`
	Title       string         `json:"title,omitempty" jsonschema:"the name, e-mail, number or description that identifies it"`
	Status      string         `json:"status,omitempty"`
	Amount      *stcore.Amount `json:"amount,omitempty" jsonschema:"its amount: a charge's or payment intent's amount, an invoice's total, a price's unit amount"`
	CustomerRef string         `json:"customer_ref,omitempty"`
	CreatedAt   time.Time      `json:"created_at,omitzero"`
}

type hitObject struct {
	ID          string             `json:"id"`
	Object      string             `json:"object"`
	Name        string             `json:"name"`
	Email       string             `json:"email"`
	Number      string             `json:"number"`
	Nickname    string             `json:"nickname"`
	Description string             `json:"description"`
	Status      string             `json:"status"`
	Active      *bool              `json:"active"`
	Amount      *int64             `json:"amount"`
	Total       *int64             `json:"total"`
	UnitAmount  *int64             `json:"unit_amount"`
	Currency    string             `json:"currency"`
	Customer    *stcore.Expandable `json:"customer"`
	Created     int64              `json:"created"`
	Livemode    bool               `json:"livemode"`
}

type searchIn struct {
	saas.Page
	Object string `json:"object" jsonschema:"what to search: customers, charges, payment_intents, invoices, subscriptions, products or prices"`
	Query  string `json:"query" jsonschema:"a query in Stripe's search query language, e.g. email:'jenny@example.com', status:'open' AND total>1000, metadata['order_id']:'6735', name~'shirt'"`
}

func (t search) tools() []connectors.Tool {
	var objects []string
	for _, s := range searchable {
		objects = append(objects, s.object)
	}
	tool := connectors.Returning[saas.List[Hit]](connectors.NewTool("search",
		fmt.Sprintf("Search %s with Stripe's search query language (fields, =, :, ~ for a substring, <, >, AND, OR, -, metadata['key']); newest first, a page at a time: limit (default %d, at most %d) and cursor. Results may lag writes by a minute; not in India.", strings.Join(objects, ", "), DefaultPage, MaxPage),
		legate.ClassRead, t.search))
	return []connectors.Tool{withEnum(tool, "object", objects)}
}

func (t search) search(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	i := slices.IndexFunc(searchable, func(s searchObject) bool { return s.object == in.Object })
	if i < 0 {
		var names []string
		for _, s := range searchable {
			names = append(names, s.object)
		}
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: object: one of %s, got %q", strings.Join(names, ", "), in.Object)
	}
	query := strings.TrimSpace(in.Query)
	if query == "" || len(query) > MaxQuery {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: query: a query of 1 to %d characters in Stripe's search query language, e.g. email:'jenny@example.com'", MaxQuery)
	}
	kind := searchable[i].kind
	out, err := stcore.Search(ctx, t.Core, call, in.Page, DefaultPage, MaxPage, "/v1/"+in.Object+"/search", query,
		func(o *hitObject) (Hit, error) { return t.hitOf(call, kind, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText(in.Object+" found", stcore.Lines(out.Items, hitText), out.NextCursor)}, nil
}

func (t search) hitOf(call *connectors.Call, kind stcore.Kind, o *hitObject) (Hit, error) {
	if o == nil || o.ID == "" {
		return Hit{}, saas.Mapping("stripe", "a search result without an id")
	}
	out := Hit{Object: t.Kit.Object(call, "search_hit", kind.Name, o.ID), Kind: kind.Name, Status: o.Status,
		CustomerRef: t.RefOf(call, stcore.Customer, stcore.IDOf(o.Customer)), CreatedAt: stcore.Unix(o.Created)}
	for _, s := range []string{o.Name, o.Email, o.Number, o.Nickname, o.Description} {
		if s != "" {
			out.Title = s
			break
		}
	}
	if o.Active != nil && out.Status == "" {
		out.Status = map[bool]string{true: "active", false: "inactive"}[*o.Active]
	}
	for _, a := range []*int64{o.Amount, o.Total, o.UnitAmount} {
		if a != nil && o.Currency != "" {
			m := stcore.Money(*a, o.Currency)
			out.Amount = &m
			break
		}
	}
	path := map[string]string{"customer": "customers", "product": "products", "price": "prices", "invoice": "invoices", "subscription": "subscriptions"}[kind.Name]
	if path == "" {
		path = "payments"
	}
	out.URL = stcore.Dashboard(o.Livemode, path, o.ID)
	out.ProviderMetadata = map[string]any{"livemode": o.Livemode}
	return out, nil
}

func hitText(h Hit) string {
	s := h.Kind + " " + h.ExternalID
	if h.Title != "" {
		s += " " + h.Title
	}
	if h.Amount != nil {
		s += " " + h.Amount.Display
	}
	if h.Status != "" {
		s += " [" + h.Status + "]"
	}
	return s
}

// withEnum returns t with the input property prop limited to values in
// its schema, for the client to show; the tool checks the value itself.
func withEnum(t connectors.Tool, prop string, values []string) connectors.Tool {
	var schema map[string]any
	if json.Unmarshal(t.InputSchema, &schema) != nil {
		return t
	}
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	if p == nil {
		return t
	}
	p["enum"] = values
	if raw, err := json.Marshal(schema); err == nil {
		t.InputSchema = raw
	}
	return t
}

// Package billing is the stripe connector's billing toolset: invoices
// (list, read, create with their items, finalize, send) and subscriptions
// (list, read, update, cancel).
package billing

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/stripe/stcore"
)

// Tools are the billing toolset's tools.
type Tools struct{ *stcore.Core }

// List lists them.
func (t Tools) List() []connectors.Tool {
	page := fmt.Sprintf("a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page)", stcore.DefaultPage, stcore.MaxPage)
	return []connectors.Tool{
		connectors.Returning[saas.List[Invoice]](connectors.NewTool("list_invoices",
			"List the account's invoices, newest first, optionally of one customer or subscription or in one status, "+page+".", legate.ClassRead, t.listInvoices)),
		connectors.Returning[Invoice](connectors.NewTool("get_invoice",
			"Read one invoice: number, status, totals, lines, due date, the page the customer pays it on.", legate.ClassRead, t.getInvoice)),
		connectors.Returning[Invoice](connectors.NewTool("create_invoice",
			writes("Create a draft invoice for a customer with its items (an amount and a description, or a price and a quantity); finalize_invoice then makes it payable."), legate.ClassWrite, t.createInvoice)),
		connectors.Returning[Invoice](connectors.NewTool("finalize_invoice",
			writes("Finalize a draft invoice: it gets its number and becomes payable (open); it can no longer be edited."), legate.ClassWrite, t.finalizeInvoice)),
		connectors.Returning[Invoice](connectors.NewTool("send_invoice",
			writes("E-mail an open invoice to its customer (collection method send_invoice), with the link to pay it."), legate.ClassWrite, t.sendInvoice)),
		connectors.Returning[saas.List[Subscription]](connectors.NewTool("list_subscriptions",
			"List the account's subscriptions, newest first, optionally of one customer or price or in one status (all includes canceled ones; the default leaves them out), "+page+".", legate.ClassRead, t.listSubscriptions)),
		connectors.Returning[Subscription](connectors.NewTool("get_subscription",
			"Read one subscription: status, customer, items with their prices and quantities, current period, cancellation.", legate.ClassRead, t.getSubscription)),
		connectors.Returning[Subscription](connectors.NewTool("update_subscription",
			writes("Change a subscription: the price or quantity of its items, cancel at the period's end (or undo it), its description or metadata."), legate.ClassWrite, t.updateSubscription)),
		connectors.Returning[Subscription](connectors.NewTool("cancel_subscription",
			writes("Cancel a subscription now: the customer is no longer billed, and it cannot be resumed. To stop at the period's end instead, use update_subscription with cancel_at_period_end."), legate.ClassDestructive, t.cancelSubscription)),
	}
}

func writes(desc string) string { return desc + " " + saas.OnceNote }

// Invoice is an invoice.
type Invoice struct {
	model.Object
	Number           string        `json:"number,omitempty" jsonschema:"given when the invoice is finalized"`
	Status           string        `json:"status" jsonschema:"draft, open, paid, uncollectible or void"`
	CustomerRef      string        `json:"customer_ref,omitempty"`
	CustomerEmail    string        `json:"customer_email,omitempty"`
	SubscriptionRef  string        `json:"subscription_ref,omitempty"`
	Total            stcore.Amount `json:"total"`
	AmountDue        stcore.Amount `json:"amount_due"`
	AmountPaid       stcore.Amount `json:"amount_paid"`
	AmountRemaining  stcore.Amount `json:"amount_remaining"`
	CollectionMethod string        `json:"collection_method" jsonschema:"charge_automatically or send_invoice"`
	DueDate          time.Time     `json:"due_date,omitzero"`
	PayURL           string        `json:"pay_url,omitempty" jsonschema:"the page where the customer pays the invoice (once finalized)"`
	PDF              string        `json:"pdf,omitempty" jsonschema:"the invoice as a PDF (once finalized)"`
	Lines            []InvoiceLine `json:"lines" jsonschema:"the first lines of the invoice"`
	MoreLines        bool          `json:"more_lines,omitempty" jsonschema:"the invoice has more lines than listed"`
	CreatedAt        time.Time     `json:"created_at,omitzero"`
}

// InvoiceLine is a line of an invoice.
type InvoiceLine struct {
	Description string        `json:"description,omitempty"`
	Amount      stcore.Amount `json:"amount"`
	Quantity    int64         `json:"quantity,omitempty"`
}

type invoiceObject struct {
	ID               string             `json:"id"`
	Number           string             `json:"number"`
	Status           string             `json:"status"`
	Currency         string             `json:"currency"`
	Customer         *stcore.Expandable `json:"customer"`
	CustomerEmail    string             `json:"customer_email"`
	Total            int64              `json:"total"`
	AmountDue        int64              `json:"amount_due"`
	AmountPaid       int64              `json:"amount_paid"`
	AmountRemaining  int64              `json:"amount_remaining"`
	CollectionMethod string             `json:"collection_method"`
	DueDate          int64              `json:"due_date"`
	HostedInvoiceURL string             `json:"hosted_invoice_url"`
	InvoicePDF       string             `json:"invoice_pdf"`
	Description      string             `json:"description"`
	Created          int64              `json:"created"`
	Livemode         bool               `json:"livemode"`
	Parent           *struct {
		SubscriptionDetails *struct {
			Subscription *stcore.Expandable `json:"subscription"`
		} `json:"subscription_details"`
	} `json:"parent"`
	Lines *struct {
		HasMore bool `json:"has_more"`
		Data    []struct {
			Description string `json:"description"`
			Amount      int64  `json:"amount"`
			Currency    string `json:"currency"`
			Quantity    int64  `json:"quantity"`
		} `json:"data"`
	} `json:"lines"`
	Metadata map[string]string `json:"metadata"`
}

var invoiceStatuses = []string{"draft", "open", "paid", "uncollectible", "void"}

type listInvoicesIn struct {
	saas.Page
	Customer     string `json:"customer,omitempty" jsonschema:"only this customer's invoices: its ref or Stripe's id (cus_...)"`
	Subscription string `json:"subscription,omitempty" jsonschema:"only this subscription's invoices: its ref or Stripe's id (sub_...)"`
	Status       string `json:"status,omitempty" jsonschema:"only invoices in this status: draft, open, paid, uncollectible or void"`
}

type invoiceIn struct {
	Invoice string `json:"invoice" jsonschema:"the invoice: its ref or Stripe's id (in_...)"`
}

type createInvoiceIn struct {
	Customer         string            `json:"customer" jsonschema:"the customer billed: its ref or Stripe's id (cus_...)"`
	Items            []invoiceItemIn   `json:"items" jsonschema:"the invoice's items, 1 to 20"`
	Currency         string            `json:"currency,omitempty" jsonschema:"ISO 4217 code of the items given by amount (usd, eur); required with them"`
	CollectionMethod string            `json:"collection_method,omitempty" jsonschema:"send_invoice (the default: the customer pays on the invoice's page, sent by send_invoice) or charge_automatically (the customer's default payment method is charged)"`
	DaysUntilDue     int               `json:"days_until_due,omitempty" jsonschema:"days the customer has to pay, with send_invoice; 30 when omitted"`
	Description      string            `json:"description,omitempty" jsonschema:"a memo shown on the invoice"`
	Metadata         map[string]string `json:"metadata,omitempty"`
}

type invoiceItemIn struct {
	Description string `json:"description,omitempty" jsonschema:"what the item is; required with amount"`
	Amount      int64  `json:"amount,omitempty" jsonschema:"the item's amount in the currency's smallest unit (cents); or give price"`
	Price       string `json:"price,omitempty" jsonschema:"a price: its ref or Stripe's id (price_...); or give amount"`
	Quantity    int64  `json:"quantity,omitempty" jsonschema:"how many of price; 1 when omitted"`
}

// MaxItems bounds the items of an invoice created, a subscription updated
// or a payment link.
const MaxItems = 20

func (t Tools) listInvoices(ctx context.Context, call *connectors.Call, in *listInvoicesIn) (*legate.Result, error) {
	q := url.Values{}
	customer, err := t.ID(call, stcore.Customer, in.Customer, "customer")
	if err != nil {
		return nil, err
	}
	sub, err := t.ID(call, stcore.Subscription, in.Subscription, "subscription")
	if err != nil {
		return nil, err
	}
	if in.Status != "" && !slices.Contains(invoiceStatuses, in.Status) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: status: one of %s, got %q", strings.Join(invoiceStatuses, ", "), in.Status)
	}
	for k, v := range map[string]string{"customer": customer, "subscription": sub, "status": in.Status} {
		if v != "" {
			q.Set(k, v)
		}
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, stcore.DefaultPage, stcore.MaxPage, "/v1/invoices", q,
		func(o *invoiceObject) string { return o.ID },
		func(o *invoiceObject) (Invoice, error) { return t.invoiceOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("invoice(s)", stcore.Lines(out.Items, invoiceText), out.NextCursor)}, nil
}

func (t Tools) invoiceID(call *connectors.Call, in *invoiceIn) (string, error) {
	id, err := t.ID(call, stcore.Invoice, in.Invoice, "invoice")
	if err == nil && id == "" {
		err = stcore.Need("invoice", "its ref or in_...")
	}
	return id, err
}

func (t Tools) getInvoice(ctx context.Context, call *connectors.Call, in *invoiceIn) (*legate.Result, error) {
	id, err := t.invoiceID(call, in)
	if err != nil {
		return nil, err
	}
	var o invoiceObject
	if err := t.Get(ctx, call, "/v1/invoices/"+url.PathEscape(id), nil, &o); err != nil {
		return nil, err
	}
	out, err := t.invoiceOf(call, &o)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: invoiceText(out)}, nil
}

func (t Tools) createInvoice(ctx context.Context, call *connectors.Call, in *createInvoiceIn) (*legate.Result, error) {
	customer, err := t.ID(call, stcore.Customer, in.Customer, "customer")
	if err != nil {
		return nil, err
	}
	if customer == "" {
		return nil, stcore.Need("customer", "its ref or cus_...")
	}
	items, err := t.itemParams(call, customer, in)
	if err != nil {
		return nil, err
	}
	q := url.Values{"customer": {customer}, "auto_advance": {"false"}, "pending_invoice_items_behavior": {"exclude"}}
	if in.DaysUntilDue < 0 || in.DaysUntilDue > 3650 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: days_until_due: 1 to 3650, got %d", in.DaysUntilDue)
	}
	switch in.CollectionMethod {
	case "", "send_invoice":
		days := in.DaysUntilDue
		if days == 0 {
			days = 30
		}
		q.Set("collection_method", "send_invoice")
		q.Set("days_until_due", strconv.Itoa(days))
	case "charge_automatically":
		if in.DaysUntilDue != 0 {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: days_until_due: only with collection_method send_invoice")
		}
		q.Set("collection_method", in.CollectionMethod)
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: collection_method: send_invoice or charge_automatically, got %q", in.CollectionMethod)
	}
	if in.Description != "" {
		q.Set("description", in.Description)
	}
	if err := stcore.SetMetadata(q, in.Metadata); err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[Invoice]{
		// Each request has a key of its own, derived from the call's: a
		// retry repeats all of them, and Stripe replays those it did.
		Send: func(ctx context.Context, key, marker string) (*Invoice, error) {
			var inv invoiceObject
			if err := t.Send(ctx, stcore.Request{Method: http.MethodPost, Path: "/v1/invoices", Params: q, Idempotency: marker}, key, &inv); err != nil {
				return nil, err
			}
			if inv.ID == "" {
				return nil, saas.Mapping("stripe", "an invoice without an id")
			}
			for i, item := range items {
				item.Set("invoice", inv.ID)
				r := stcore.Request{Method: http.MethodPost, Path: "/v1/invoiceitems", Params: item, Idempotency: fmt.Sprintf("%s-item-%d", marker, i+1)}
				if err := t.Send(ctx, r, key, &struct{}{}); err != nil {
					return nil, err
				}
			}
			if err := t.Send(ctx, stcore.Request{Method: http.MethodGet, Path: "/v1/invoices/" + url.PathEscape(inv.ID)}, key, &inv); err != nil {
				return nil, err
			}
			m, err := t.invoiceOf(call, &inv)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created draft invoice " + invoiceText(*out)}, nil
}

// itemParams checks the items of in and returns the params of each.
func (t Tools) itemParams(call *connectors.Call, customer string, in *createInvoiceIn) ([]url.Values, error) {
	if len(in.Items) == 0 || len(in.Items) > MaxItems {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: items: 1 to %d items, got %d", MaxItems, len(in.Items))
	}
	var out []url.Values
	for i, it := range in.Items {
		field := fmt.Sprintf("items[%d]", i)
		q := url.Values{"customer": {customer}}
		price, err := t.ID(call, stcore.Price, it.Price, field+".price")
		switch {
		case err != nil:
			return nil, err
		case (price == "") == (it.Amount == 0):
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s: give amount (with a description) or price, one of them", field)
		case price != "":
			if it.Quantity < 0 {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s.quantity: positive, got %d", field, it.Quantity)
			}
			q.Set("pricing[price]", price)
			q.Set("quantity", strconv.FormatInt(max(it.Quantity, 1), 10))
		default:
			if it.Amount < 0 || it.Description == "" {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s: an amount above 0 and a description", field)
			}
			if err := stcore.CheckCurrency("currency", in.Currency); err != nil {
				return nil, err
			}
			q.Set("amount", strconv.FormatInt(it.Amount, 10))
			q.Set("currency", strings.ToLower(in.Currency))
		}
		if it.Description != "" {
			q.Set("description", it.Description)
		}
		out = append(out, q)
	}
	return out, nil
}

// invoiceAction posts to the invoice's action (finalize, send).
func (t Tools) invoiceAction(ctx context.Context, call *connectors.Call, in *invoiceIn, action, done string) (*legate.Result, error) {
	id, err := t.invoiceID(call, in)
	if err != nil {
		return nil, err
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/invoices/"+url.PathEscape(id)+"/"+action, nil),
		func(o *invoiceObject) (Invoice, error) { return t.invoiceOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: done + " invoice " + invoiceText(*out)}, nil
}

func (t Tools) finalizeInvoice(ctx context.Context, call *connectors.Call, in *invoiceIn) (*legate.Result, error) {
	return t.invoiceAction(ctx, call, in, "finalize", "finalized")
}

func (t Tools) sendInvoice(ctx context.Context, call *connectors.Call, in *invoiceIn) (*legate.Result, error) {
	return t.invoiceAction(ctx, call, in, "send", "sent")
}

func (t Tools) invoiceOf(call *connectors.Call, o *invoiceObject) (Invoice, error) {
	if o == nil || o.ID == "" || o.Currency == "" {
		return Invoice{}, saas.Mapping("stripe", "an invoice without an id or a currency")
	}
	out := Invoice{
		Object:           t.Kit.Object(call, "invoice", stcore.Invoice.Name, o.ID),
		Number:           o.Number,
		Status:           o.Status,
		CustomerRef:      t.RefOf(call, stcore.Customer, stcore.IDOf(o.Customer)),
		CustomerEmail:    o.CustomerEmail,
		Total:            stcore.Money(o.Total, o.Currency),
		AmountDue:        stcore.Money(o.AmountDue, o.Currency),
		AmountPaid:       stcore.Money(o.AmountPaid, o.Currency),
		AmountRemaining:  stcore.Money(o.AmountRemaining, o.Currency),
		CollectionMethod: o.CollectionMethod,
		DueDate:          stcore.Unix(o.DueDate),
		PayURL:           o.HostedInvoiceURL,
		PDF:              o.InvoicePDF,
		Lines:            []InvoiceLine{},
		CreatedAt:        stcore.Unix(o.Created),
	}
	out.URL = stcore.Dashboard(o.Livemode, "invoices", o.ID)
	if p := o.Parent; p != nil && p.SubscriptionDetails != nil {
		out.SubscriptionRef = t.RefOf(call, stcore.Subscription, stcore.IDOf(p.SubscriptionDetails.Subscription))
	}
	if o.Lines != nil {
		for _, l := range o.Lines.Data {
			cur := l.Currency
			if cur == "" {
				cur = o.Currency
			}
			out.Lines = append(out.Lines, InvoiceLine{Description: l.Description, Amount: stcore.Money(l.Amount, cur), Quantity: l.Quantity})
		}
		out.MoreLines = o.Lines.HasMore
	}
	meta := map[string]any{"livemode": o.Livemode}
	if o.Description != "" {
		meta["description"] = o.Description
	}
	if len(o.Metadata) > 0 {
		meta["metadata"] = o.Metadata
	}
	out.ProviderMetadata = meta
	return out, nil
}

func invoiceText(inv Invoice) string {
	s := inv.ExternalID
	if inv.Number != "" {
		s += " " + inv.Number
	}
	s += fmt.Sprintf(" [%s] total %s, due %s", inv.Status, inv.Total.Display, inv.AmountDue.Display)
	if inv.AmountPaid.Amount > 0 {
		s += ", paid " + inv.AmountPaid.Display
	}
	if !inv.DueDate.IsZero() {
		s += ", due by " + inv.DueDate.Format("2006-01-02")
	}
	if inv.CustomerEmail != "" {
		s += ", to " + inv.CustomerEmail
	}
	if inv.PayURL != "" {
		s += ", pay at " + inv.PayURL
	}
	return s
}

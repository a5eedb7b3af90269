package stripe

import (
	"context"
	"fmt"
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

// payments is the payments toolset: charges, payment intents, refunds.
type payments struct{ *stcore.Core }

// PaymentIntent is a payment intent: a payment from its creation to its
// success or failure, with its charges.
type PaymentIntent struct {
	model.Object
	Amount         stcore.Amount `json:"amount"`
	AmountReceived stcore.Amount `json:"amount_received"`
	Status         string        `json:"status" jsonschema:"requires_payment_method, requires_confirmation, requires_action, processing, requires_capture, canceled or succeeded"`
	CustomerRef    string        `json:"customer_ref,omitempty"`
	ChargeRef      string        `json:"charge_ref,omitempty" jsonschema:"ref of its latest charge, which create_refund takes"`
	Description    string        `json:"description,omitempty"`
	CreatedAt      time.Time     `json:"created_at,omitzero"`
}

type paymentIntentObject struct {
	ID                 string                       `json:"id"`
	Amount             int64                        `json:"amount"`
	AmountReceived     int64                        `json:"amount_received"`
	Currency           string                       `json:"currency"`
	Status             string                       `json:"status"`
	Description        string                       `json:"description"`
	Created            int64                        `json:"created"`
	Livemode           bool                         `json:"livemode"`
	Customer           *stcore.Expandable           `json:"customer"`
	LatestCharge       *stcore.Expandable           `json:"latest_charge"`
	CaptureMethod      string                       `json:"capture_method"`
	CancellationReason string                       `json:"cancellation_reason"`
	PaymentMethodTypes []string                     `json:"payment_method_types"`
	LastPaymentError   *struct{ Code, Type string } `json:"last_payment_error"`
	Metadata           map[string]string            `json:"metadata"`
}

type listChargesIn struct {
	saas.Page
	Customer   string `json:"customer,omitempty" jsonschema:"only the charges of this customer: its ref or Stripe's id (cus_...)"`
	CustomerID string `json:"customer_id,omitempty" jsonschema:"only the charges of this customer: Stripe's id (cus_...)"`
}

type listPaymentIntentsIn struct {
	saas.Page
	Customer string `json:"customer,omitempty" jsonschema:"only the payment intents of this customer: its ref or Stripe's id (cus_...)"`
}

type getPaymentIntentIn struct {
	PaymentIntent string `json:"payment_intent" jsonschema:"the payment intent: its ref or Stripe's id (pi_...)"`
}

type createRefundIn struct {
	Charge   string `json:"charge,omitempty" jsonschema:"the charge to refund: its ref (from list_charges, a payment intent's charge_ref) or Stripe's id; or give charge_id"`
	ChargeID string `json:"charge_id,omitempty" jsonschema:"Stripe's id of the charge (ch_... or py_...), when no ref is at hand"`
	Amount   int64  `json:"amount,omitempty" jsonschema:"amount to refund in the charge's smallest currency unit (cents); omit it to refund what remains of the charge"`
	Reason   string `json:"reason,omitempty" jsonschema:"duplicate, fraudulent or requested_by_customer"`
}

var refundReasons = []string{"duplicate", "fraudulent", "requested_by_customer"}

func (t payments) tools() []connectors.Tool {
	page := fmt.Sprintf("a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page)", DefaultPage, MaxPage)
	return []connectors.Tool{
		connectors.Returning[saas.List[model.Charge]](connectors.NewTool("list_charges",
			"List the account's charges (charge.v1), newest first, optionally of one customer, "+page+".", legate.ClassRead, t.listCharges)),
		connectors.Returning[saas.List[PaymentIntent]](connectors.NewTool("list_payment_intents",
			"List the account's payment intents, newest first, optionally of one customer, "+page+".", legate.ClassRead, t.listIntents)),
		connectors.Returning[PaymentIntent](connectors.NewTool("get_payment_intent",
			"Read one payment intent: amount, amount received, status, customer, latest charge.", legate.ClassRead, t.getIntent)),
		connectors.Returning[model.Refund](connectors.NewTool("create_refund",
			writes("Refund a charge, in full or in part; returns the refund (refund.v1)."), legate.ClassWrite, t.createRefund)),
	}
}

func (t payments) listCharges(ctx context.Context, call *connectors.Call, in *listChargesIn) (*legate.Result, error) {
	customer, err := t.IDOrRef(call, stcore.Customer, in.Customer, in.CustomerID, "customer")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if customer != "" {
		q.Set("customer", customer)
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, DefaultPage, MaxPage, "/v1/charges", q,
		func(ch *stcore.ChargeObject) string { return ch.ID },
		func(ch *stcore.ChargeObject) (model.Charge, error) { return t.ChargeOf(call, ch) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("charge(s)", stcore.Lines(out.Items, chargeText), out.NextCursor)}, nil
}

func (t payments) listIntents(ctx context.Context, call *connectors.Call, in *listPaymentIntentsIn) (*legate.Result, error) {
	customer, err := t.ID(call, stcore.Customer, in.Customer, "customer")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if customer != "" {
		q.Set("customer", customer)
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, DefaultPage, MaxPage, "/v1/payment_intents", q,
		func(pi *paymentIntentObject) string { return pi.ID },
		func(pi *paymentIntentObject) (PaymentIntent, error) { return t.intentOf(call, pi) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("payment intent(s)", stcore.Lines(out.Items, intentText), out.NextCursor)}, nil
}

func (t payments) getIntent(ctx context.Context, call *connectors.Call, in *getPaymentIntentIn) (*legate.Result, error) {
	id, err := t.ID(call, stcore.PaymentIntent, in.PaymentIntent, "payment_intent")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, stcore.Need("payment_intent", "its ref or pi_...")
	}
	var pi paymentIntentObject
	if err := t.Get(ctx, call, "/v1/payment_intents/"+url.PathEscape(id), nil, &pi); err != nil {
		return nil, err
	}
	out, err := t.intentOf(call, &pi)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: intentText(out)}, nil
}

func (t payments) intentOf(call *connectors.Call, pi *paymentIntentObject) (PaymentIntent, error) {
	if pi == nil || pi.ID == "" || pi.Currency == "" {
		return PaymentIntent{}, saas.Mapping("stripe", "a payment intent without an id or a currency")
	}
	out := PaymentIntent{
		Object:         t.Kit.Object(call, "payment_intent", stcore.PaymentIntent.Name, pi.ID),
		Amount:         stcore.Money(pi.Amount, pi.Currency),
		AmountReceived: stcore.Money(pi.AmountReceived, pi.Currency),
		Status:         pi.Status,
		CustomerRef:    t.RefOf(call, stcore.Customer, stcore.IDOf(pi.Customer)),
		ChargeRef:      t.RefOf(call, stcore.Charge, stcore.IDOf(pi.LatestCharge)),
		Description:    pi.Description,
		CreatedAt:      stcore.Unix(pi.Created),
	}
	out.URL = stcore.Dashboard(pi.Livemode, "payments", pi.ID)
	meta := map[string]any{"livemode": pi.Livemode}
	if pi.CaptureMethod != "" {
		meta["capture_method"] = pi.CaptureMethod
	}
	if pi.CancellationReason != "" {
		meta["cancellation_reason"] = pi.CancellationReason
	}
	if len(pi.PaymentMethodTypes) > 0 {
		meta["payment_method_types"] = pi.PaymentMethodTypes
	}
	if e := pi.LastPaymentError; e != nil && (e.Code != "" || e.Type != "") {
		meta["last_payment_error"] = strings.TrimSpace(e.Type + " " + e.Code)
	}
	if len(pi.Metadata) > 0 {
		meta["metadata"] = pi.Metadata
	}
	out.ProviderMetadata = meta
	return out, nil
}

func (t payments) createRefund(ctx context.Context, call *connectors.Call, in *createRefundIn) (*legate.Result, error) {
	charge, err := t.IDOrRef(call, stcore.Charge, in.Charge, in.ChargeID, "charge")
	if err != nil {
		return nil, err
	}
	switch {
	case charge == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: give charge (a ref) or charge_id")
	case in.Amount < 0:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: amount: must be positive, got %d", in.Amount)
	case in.Reason != "" && !slices.Contains(refundReasons, in.Reason):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: reason: one of %s, got %q", strings.Join(refundReasons, ", "), in.Reason)
	}
	q := url.Values{"charge": {charge}}
	if in.Amount > 0 {
		q.Set("amount", strconv.FormatInt(in.Amount, 10))
	}
	if in.Reason != "" {
		q.Set("reason", in.Reason)
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/refunds", q),
		func(r *stcore.RefundObject) (model.Refund, error) { return t.RefundOf(call, r) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "refunded " + refundText(*out)}, nil
}

func chargeText(ch model.Charge) string {
	s := fmt.Sprintf("%s %s [%s]", ch.ExternalID, stcore.FormatMoney(ch.Amount, ch.Currency), ch.Status)
	if ch.Refunded > 0 {
		s += ", refunded " + stcore.FormatMoney(ch.Refunded, ch.Currency)
	}
	if ch.Description != "" {
		s += " " + ch.Description
	}
	if !ch.CreatedAt.IsZero() {
		s += " (" + ch.CreatedAt.Format("2006-01-02 15:04") + " UTC)"
	}
	return s
}

func intentText(pi PaymentIntent) string {
	s := fmt.Sprintf("%s %s [%s]", pi.ExternalID, pi.Amount.Display, pi.Status)
	if pi.AmountReceived.Amount > 0 {
		s += ", received " + pi.AmountReceived.Display
	}
	if pi.Description != "" {
		s += " " + pi.Description
	}
	if !pi.CreatedAt.IsZero() {
		s += " (" + pi.CreatedAt.Format("2006-01-02 15:04") + " UTC)"
	}
	return s
}

func refundText(r model.Refund) string {
	s := fmt.Sprintf("%s %s [%s]", r.ExternalID, stcore.FormatMoney(r.Amount, r.Currency), r.Status)
	if ch, ok := r.ProviderMetadata["charge"].(string); ok {
		s += " of " + ch
	}
	return s
}

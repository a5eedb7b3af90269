package stripe

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/stripe/stcore"
)

// disputes is the disputes toolset.
type disputes struct{ *stcore.Core }

// Dispute is a dispute (a chargeback or an inquiry) on a payment.
type Dispute struct {
	model.Object
	Amount        stcore.Amount `json:"amount"`
	Status        string        `json:"status" jsonschema:"warning_needs_response, warning_under_review, warning_closed, needs_response, under_review, won or lost"`
	Reason        string        `json:"reason" jsonschema:"the card network's reason: fraudulent, product_not_received, duplicate, general, ..."`
	ChargeRef     string        `json:"charge_ref,omitempty" jsonschema:"ref of the disputed charge"`
	EvidenceDueBy time.Time     `json:"evidence_due_by,omitzero" jsonschema:"the last moment to submit evidence"`
	CreatedAt     time.Time     `json:"created_at,omitzero"`
}

type disputeObject struct {
	ID                 string             `json:"id"`
	Amount             int64              `json:"amount"`
	Currency           string             `json:"currency"`
	Status             string             `json:"status"`
	Reason             string             `json:"reason"`
	Created            int64              `json:"created"`
	Livemode           bool               `json:"livemode"`
	Charge             *stcore.Expandable `json:"charge"`
	PaymentIntent      *stcore.Expandable `json:"payment_intent"`
	IsChargeRefundable bool               `json:"is_charge_refundable"`
	EvidenceDetails    *struct {
		DueBy       int64 `json:"due_by"`
		HasEvidence bool  `json:"has_evidence"`
		PastDue     bool  `json:"past_due"`
	} `json:"evidence_details"`
}

type listDisputesIn struct {
	saas.Page
	Charge string `json:"charge,omitempty" jsonschema:"only the disputes of this charge: its ref or Stripe's id (ch_...)"`
}

type getDisputeIn struct {
	Dispute string `json:"dispute" jsonschema:"the dispute: its ref or Stripe's id (dp_...)"`
}

func (t disputes) tools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[saas.List[Dispute]](connectors.NewTool("list_disputes",
			fmt.Sprintf("List the account's disputes, newest first, optionally of one charge; a page at a time: limit (default %d, at most %d) and cursor.", DefaultPage, MaxPage),
			legate.ClassRead, t.list)),
		connectors.Returning[Dispute](connectors.NewTool("get_dispute",
			"Read one dispute: amount, status, reason, the charge, when evidence is due.", legate.ClassRead, t.get)),
	}
}

func (t disputes) list(ctx context.Context, call *connectors.Call, in *listDisputesIn) (*legate.Result, error) {
	charge, err := t.ID(call, stcore.Charge, in.Charge, "charge")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if charge != "" {
		q.Set("charge", charge)
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, DefaultPage, MaxPage, "/v1/disputes", q,
		func(d *disputeObject) string { return d.ID },
		func(d *disputeObject) (Dispute, error) { return t.disputeOf(call, d) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("dispute(s)", stcore.Lines(out.Items, disputeText), out.NextCursor)}, nil
}

func (t disputes) get(ctx context.Context, call *connectors.Call, in *getDisputeIn) (*legate.Result, error) {
	id, err := t.ID(call, stcore.Dispute, in.Dispute, "dispute")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, stcore.Need("dispute", "its ref or dp_...")
	}
	var d disputeObject
	if err := t.Get(ctx, call, "/v1/disputes/"+url.PathEscape(id), nil, &d); err != nil {
		return nil, err
	}
	out, err := t.disputeOf(call, &d)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: disputeText(out)}, nil
}

func (t disputes) disputeOf(call *connectors.Call, d *disputeObject) (Dispute, error) {
	if d == nil || d.ID == "" || d.Currency == "" {
		return Dispute{}, saas.Mapping("stripe", "a dispute without an id or a currency")
	}
	out := Dispute{
		Object:    t.Kit.Object(call, "dispute", stcore.Dispute.Name, d.ID),
		Amount:    stcore.Money(d.Amount, d.Currency),
		Status:    d.Status,
		Reason:    d.Reason,
		ChargeRef: t.RefOf(call, stcore.Charge, stcore.IDOf(d.Charge)),
		CreatedAt: stcore.Unix(d.Created),
	}
	out.URL = stcore.Dashboard(d.Livemode, "disputes", d.ID)
	meta := map[string]any{"livemode": d.Livemode, "is_charge_refundable": d.IsChargeRefundable}
	if id := stcore.IDOf(d.Charge); id != "" {
		meta["charge"] = id
	}
	if id := stcore.IDOf(d.PaymentIntent); id != "" {
		meta["payment_intent"] = id
	}
	if e := d.EvidenceDetails; e != nil {
		out.EvidenceDueBy = stcore.Unix(e.DueBy)
		meta["has_evidence"], meta["past_due"] = e.HasEvidence, e.PastDue
	}
	out.ProviderMetadata = meta
	return out, nil
}

func disputeText(d Dispute) string {
	s := fmt.Sprintf("%s %s [%s] %s", d.ExternalID, d.Amount.Display, d.Status, d.Reason)
	if ch, ok := d.ProviderMetadata["charge"].(string); ok {
		s += " on " + ch
	}
	if !d.EvidenceDueBy.IsZero() {
		s += ", evidence due by " + d.EvidenceDueBy.Format("2006-01-02 15:04") + " UTC"
	}
	return s
}

// balance is the balance toolset.
type balance struct{ *stcore.Core }

// Balance is the account's balance, by currency.
type Balance struct {
	Available []stcore.Amount `json:"available" jsonschema:"funds that can be paid out, one amount per currency"`
	Pending   []stcore.Amount `json:"pending" jsonschema:"funds not yet available, one amount per currency"`
	Livemode  bool            `json:"livemode"`
}

type balanceObject struct {
	Livemode  bool `json:"livemode"`
	Available []struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"available"`
	Pending []struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"pending"`
}

type getBalanceIn struct{}

func (t balance) tools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[Balance](connectors.NewTool("get_balance",
			"Read the account's balance: what is available to pay out and what is pending, per currency.", legate.ClassRead, t.get)),
	}
}

func (t balance) get(ctx context.Context, call *connectors.Call, _ *getBalanceIn) (*legate.Result, error) {
	var b balanceObject
	if err := t.Get(ctx, call, "/v1/balance", nil, &b); err != nil {
		return nil, err
	}
	out := Balance{Available: []stcore.Amount{}, Pending: []stcore.Amount{}, Livemode: b.Livemode}
	for _, a := range b.Available {
		out.Available = append(out.Available, stcore.Money(a.Amount, a.Currency))
	}
	for _, a := range b.Pending {
		out.Pending = append(out.Pending, stcore.Money(a.Amount, a.Currency))
	}
	show := func(as []stcore.Amount) string {
		if len(as) == 0 {
			return "nothing"
		}
		return strings.Join(stcore.Lines(as, func(a stcore.Amount) string { return a.Display }), ", ")
	}
	return &legate.Result{Structured: out, Text: "available " + show(out.Available) + "; pending " + show(out.Pending)}, nil
}

package stripe

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

type getCustomerIn struct {
	Customer   string `json:"customer,omitempty" jsonschema:"ref of the customer, e.g. a charge's customer_ref; or give customer_id"`
	CustomerID string `json:"customer_id,omitempty" jsonschema:"Stripe's id of the customer (cus_...), when no ref is at hand"`
}

type listChargesIn struct {
	saas.Page
	Customer   string `json:"customer,omitempty" jsonschema:"only the charges of this customer: its ref"`
	CustomerID string `json:"customer_id,omitempty" jsonschema:"only the charges of this customer: Stripe's id (cus_...)"`
}

type createRefundIn struct {
	Charge   string `json:"charge,omitempty" jsonschema:"ref of the charge to refund, from list_charges; or give charge_id"`
	ChargeID string `json:"charge_id,omitempty" jsonschema:"Stripe's id of the charge (ch_... or py_...), when no ref is at hand"`
	Amount   int64  `json:"amount,omitempty" jsonschema:"amount to refund in the charge's smallest currency unit (cents); omit it to refund what remains of the charge"`
	Reason   string `json:"reason,omitempty" jsonschema:"duplicate, fraudulent or requested_by_customer"`
}

var refundReasons = []string{"duplicate", "fraudulent", "requested_by_customer"}

func (c *Connector) newTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[model.Customer](connectors.NewTool("get_customer",
			"Read one customer (customer.v1), by its ref or by Stripe's id.", legate.ClassRead, c.getCustomer)),
		connectors.Returning[saas.List[model.Charge]](connectors.NewTool("list_charges",
			fmt.Sprintf("List the account's charges (charge.v1), newest first, optionally of one customer, a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultCharges, MaxCharges),
			legate.ClassRead, c.listCharges)),
		connectors.Returning[model.Refund](connectors.NewTool("create_refund",
			"Refund a charge, in full or in part; returns the refund (refund.v1). Retrying the same call never refunds twice.",
			legate.ClassWrite, c.createRefund)),
	}
}

// id resolves an object named by its ref or by Stripe's id, one of them.
func (c *Connector) id(call *connectors.Call, kind, ref, raw string, pattern *regexp.Regexp, field string) (string, error) {
	switch {
	case ref != "" && raw != "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "stripe: give %s or %s_id, not both", field, field)
	case ref != "":
		return c.kit.Resolve(call, kind, ref)
	case raw == "":
		return "", nil
	case !pattern.MatchString(raw):
		return "", legate.Errorf(legate.CodeInvalidArgument, "stripe: %s_id: not a Stripe %s id, got %q", field, kind, raw)
	}
	return raw, nil
}

func (c *Connector) getCustomer(ctx context.Context, call *connectors.Call, in *getCustomerIn) (*legate.Result, error) {
	id, err := c.id(call, kindCustomer, in.Customer, in.CustomerID, customerID, "customer")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: give customer (a ref) or customer_id")
	}
	var cu customer
	if err := c.get(ctx, call, "/v1/customers/"+url.PathEscape(id), nil, &cu); err != nil {
		return nil, err
	}
	out, err := c.customerOf(call, &cu)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: customerText(out)}, nil
}

func (c *Connector) listCharges(ctx context.Context, call *connectors.Call, in *listChargesIn) (*legate.Result, error) {
	customer, err := c.id(call, kindCustomer, in.Customer, in.CustomerID, customerID, "customer")
	if err != nil {
		return nil, err
	}
	p, err := c.kit.Open(call, in.Page, DefaultCharges, MaxCharges)
	if err != nil {
		return nil, err
	}
	var list chargeList
	q := url.Values{"limit": {strconv.Itoa(p.Size)}}
	if p.Token != "" {
		q.Set("starting_after", p.Token)
	}
	if customer != "" {
		q.Set("customer", customer)
	}
	err = c.get(ctx, call, "/v1/charges", q, &list)
	if err != nil {
		return nil, err
	}
	items, err := saas.Convert(list.Data, func(ch *charge) (model.Charge, error) { return c.chargeOf(call, ch) })
	if err != nil {
		return nil, err
	}
	next := ""
	if list.HasMore {
		if len(list.Data) == 0 {
			return nil, saas.Mapping("stripe", "has_more on an empty page")
		}
		next = list.Data[len(list.Data)-1].ID
	}
	out := saas.ListOf(c.kit, call, items, next)
	var b strings.Builder
	fmt.Fprintf(&b, "%d charge(s)", len(out.Items))
	for _, ch := range out.Items {
		b.WriteString("\n" + chargeText(ch))
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (c *Connector) createRefund(ctx context.Context, call *connectors.Call, in *createRefundIn) (*legate.Result, error) {
	charge, err := c.id(call, kindCharge, in.Charge, in.ChargeID, chargeID, "charge")
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
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Refund]{
		// Stripe deduplicates by Idempotency-Key: every attempt, and every
		// retry of the call, sends the same key, so no Find.
		Send: func(ctx context.Context, key, marker string) (*model.Refund, error) {
			var r refund
			q := url.Values{"charge": {charge}}
			if in.Amount > 0 {
				q.Set("amount", strconv.FormatInt(in.Amount, 10))
			}
			if in.Reason != "" {
				q.Set("reason", in.Reason)
			}
			err := c.send(ctx, request{method: http.MethodPost, path: "/v1/refunds", params: q, idempotency: marker}, key, &r)
			if err != nil {
				return nil, err
			}
			m, err := c.refundOf(call, &r)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "refunded " + refundText(*out)}, nil
}

func customerText(cu model.Customer) string {
	s := cu.ExternalID
	if cu.Name != "" {
		s += " " + cu.Name
	}
	if cu.Email != "" {
		s += " <" + cu.Email + ">"
	}
	if !cu.CreatedAt.IsZero() {
		s += ", customer since " + cu.CreatedAt.Format("2006-01-02")
	}
	return s
}

func chargeText(ch model.Charge) string {
	s := fmt.Sprintf("%s %s [%s]", ch.ExternalID, formatMoney(ch.Amount, ch.Currency), ch.Status)
	if ch.Refunded > 0 {
		s += ", refunded " + formatMoney(ch.Refunded, ch.Currency)
	}
	if ch.Description != "" {
		s += " " + ch.Description
	}
	if !ch.CreatedAt.IsZero() {
		s += " (" + ch.CreatedAt.Format("2006-01-02 15:04") + " UTC)"
	}
	return s
}

func refundText(r model.Refund) string {
	s := fmt.Sprintf("%s %s [%s]", r.ExternalID, formatMoney(r.Amount, r.Currency), r.Status)
	if ch, ok := r.ProviderMetadata["charge"].(string); ok {
		s += " of " + ch
	}
	return s
}

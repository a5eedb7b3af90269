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

// Subscription is a subscription.
type Subscription struct {
	model.Object
	Status            string             `json:"status" jsonschema:"incomplete, incomplete_expired, trialing, active, past_due, canceled, unpaid or paused"`
	CustomerRef       string             `json:"customer_ref,omitempty"`
	Items             []SubscriptionItem `json:"items"`
	CurrentPeriodEnd  time.Time          `json:"current_period_end,omitzero" jsonschema:"when the current period ends and the next invoice is made"`
	CancelAtPeriodEnd bool               `json:"cancel_at_period_end,omitempty" jsonschema:"it ends at the current period's end"`
	CancelAt          time.Time          `json:"cancel_at,omitzero"`
	CanceledAt        time.Time          `json:"canceled_at,omitzero"`
	CreatedAt         time.Time          `json:"created_at,omitzero"`
}

// SubscriptionItem is an item of a subscription: a price and a quantity.
type SubscriptionItem struct {
	ID         string         `json:"id" jsonschema:"Stripe's id of the item (si_...), which update_subscription takes"`
	PriceRef   string         `json:"price_ref,omitempty"`
	Price      string         `json:"price,omitempty" jsonschema:"Stripe's id of the price"`
	Product    string         `json:"product,omitempty" jsonschema:"Stripe's id of the price's product"`
	Quantity   int64          `json:"quantity,omitempty"`
	UnitAmount *stcore.Amount `json:"unit_amount,omitempty"`
	Interval   string         `json:"interval,omitempty" jsonschema:"day, week, month or year"`
}

type subscriptionObject struct {
	ID                string             `json:"id"`
	Status            string             `json:"status"`
	Customer          *stcore.Expandable `json:"customer"`
	CancelAtPeriodEnd bool               `json:"cancel_at_period_end"`
	CancelAt          int64              `json:"cancel_at"`
	CanceledAt        int64              `json:"canceled_at"`
	Created           int64              `json:"created"`
	Livemode          bool               `json:"livemode"`
	Description       string             `json:"description"`
	Items             *struct {
		Data []struct {
			ID               string `json:"id"`
			Quantity         int64  `json:"quantity"`
			CurrentPeriodEnd int64  `json:"current_period_end"`
			Price            *struct {
				ID         string             `json:"id"`
				Currency   string             `json:"currency"`
				UnitAmount *int64             `json:"unit_amount"`
				Product    *stcore.Expandable `json:"product"`
				Recurring  *struct {
					Interval string `json:"interval"`
				} `json:"recurring"`
			} `json:"price"`
		} `json:"data"`
	} `json:"items"`
	Metadata map[string]string `json:"metadata"`
}

var subscriptionStatuses = []string{"active", "past_due", "unpaid", "canceled", "incomplete", "incomplete_expired", "trialing", "paused", "ended", "all"}

type listSubscriptionsIn struct {
	saas.Page
	Customer string `json:"customer,omitempty" jsonschema:"only this customer's subscriptions: its ref or Stripe's id (cus_...)"`
	Price    string `json:"price,omitempty" jsonschema:"only the subscriptions to this price: its ref or Stripe's id (price_...)"`
	Status   string `json:"status,omitempty" jsonschema:"active, past_due, unpaid, canceled, incomplete, incomplete_expired, trialing, paused, ended or all; omitted, every status but canceled"`
}

type subscriptionIn struct {
	Subscription string `json:"subscription" jsonschema:"the subscription: its ref or Stripe's id (sub_...)"`
}

type updateSubscriptionIn struct {
	Subscription      string               `json:"subscription" jsonschema:"the subscription: its ref or Stripe's id (sub_...)"`
	Items             []subscriptionItemIn `json:"items,omitempty" jsonschema:"items to change (id) or add (no id), at most 20"`
	CancelAtPeriodEnd *bool                `json:"cancel_at_period_end,omitempty" jsonschema:"true ends the subscription at the current period's end; false undoes that"`
	ProrationBehavior string               `json:"proration_behavior,omitempty" jsonschema:"create_prorations (Stripe's default), none or always_invoice: how a change of price or quantity is billed"`
	Description       string               `json:"description,omitempty"`
	Metadata          map[string]string    `json:"metadata,omitempty" jsonschema:"keys to set; an empty value removes a key"`
}

type subscriptionItemIn struct {
	ID       string `json:"id,omitempty" jsonschema:"the item to change (si_..., from get_subscription); omit it to add an item"`
	Price    string `json:"price,omitempty" jsonschema:"the item's new price: its ref or Stripe's id (price_...)"`
	Quantity int64  `json:"quantity,omitempty" jsonschema:"the item's new quantity"`
}

type cancelSubscriptionIn struct {
	Subscription string `json:"subscription" jsonschema:"the subscription: its ref or Stripe's id (sub_...)"`
	InvoiceNow   bool   `json:"invoice_now,omitempty" jsonschema:"invoice now what is pending (metered usage, prorations)"`
	Prorate      bool   `json:"prorate,omitempty" jsonschema:"credit the unused part of the current period"`
}

func (t Tools) listSubscriptions(ctx context.Context, call *connectors.Call, in *listSubscriptionsIn) (*legate.Result, error) {
	customer, err := t.ID(call, stcore.Customer, in.Customer, "customer")
	if err != nil {
		return nil, err
	}
	price, err := t.ID(call, stcore.Price, in.Price, "price")
	if err != nil {
		return nil, err
	}
	if in.Status != "" && !slices.Contains(subscriptionStatuses, in.Status) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: status: one of %s, got %q", strings.Join(subscriptionStatuses, ", "), in.Status)
	}
	q := url.Values{}
	for k, v := range map[string]string{"customer": customer, "price": price, "status": in.Status} {
		if v != "" {
			q.Set(k, v)
		}
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, stcore.DefaultPage, stcore.MaxPage, "/v1/subscriptions", q,
		func(o *subscriptionObject) string { return o.ID },
		func(o *subscriptionObject) (Subscription, error) { return t.subscriptionOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("subscription(s)", stcore.Lines(out.Items, subscriptionText), out.NextCursor)}, nil
}

func (t Tools) subscriptionID(call *connectors.Call, value string) (string, error) {
	id, err := t.ID(call, stcore.Subscription, value, "subscription")
	if err == nil && id == "" {
		err = stcore.Need("subscription", "its ref or sub_...")
	}
	return id, err
}

func (t Tools) getSubscription(ctx context.Context, call *connectors.Call, in *subscriptionIn) (*legate.Result, error) {
	id, err := t.subscriptionID(call, in.Subscription)
	if err != nil {
		return nil, err
	}
	var o subscriptionObject
	if err := t.Get(ctx, call, "/v1/subscriptions/"+url.PathEscape(id), nil, &o); err != nil {
		return nil, err
	}
	out, err := t.subscriptionOf(call, &o)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: subscriptionText(out)}, nil
}

func (t Tools) updateSubscription(ctx context.Context, call *connectors.Call, in *updateSubscriptionIn) (*legate.Result, error) {
	id, err := t.subscriptionID(call, in.Subscription)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if len(in.Items) > MaxItems {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: items: at most %d, got %d", MaxItems, len(in.Items))
	}
	for i, it := range in.Items {
		field := fmt.Sprintf("items[%d]", i)
		price, err := t.ID(call, stcore.Price, it.Price, field+".price")
		switch {
		case err != nil:
			return nil, err
		case it.ID != "" && !validItem(it.ID):
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s.id: a subscription item's id (si_...), got %q", field, it.ID)
		case it.ID == "" && price == "":
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s: a new item needs a price", field)
		case it.Quantity < 0 || (it.ID != "" && price == "" && it.Quantity == 0):
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s: give a new price or a quantity above 0", field)
		}
		for k, v := range map[string]string{"id": it.ID, "price": price} {
			if v != "" {
				q.Set(field+"["+k+"]", v)
			}
		}
		if it.Quantity > 0 {
			q.Set(field+"[quantity]", strconv.FormatInt(it.Quantity, 10))
		}
	}
	if in.CancelAtPeriodEnd != nil {
		q.Set("cancel_at_period_end", strconv.FormatBool(*in.CancelAtPeriodEnd))
	}
	switch in.ProrationBehavior {
	case "":
	case "create_prorations", "none", "always_invoice":
		q.Set("proration_behavior", in.ProrationBehavior)
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: proration_behavior: create_prorations, none or always_invoice, got %q", in.ProrationBehavior)
	}
	if in.Description != "" {
		q.Set("description", in.Description)
	}
	if err := stcore.SetMetadata(q, in.Metadata); err != nil {
		return nil, err
	}
	if len(q) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: nothing to change: give items, cancel_at_period_end, proration_behavior with items, description or metadata")
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/subscriptions/"+url.PathEscape(id), q),
		func(o *subscriptionObject) (Subscription, error) { return t.subscriptionOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "updated subscription " + subscriptionText(*out)}, nil
}

func (t Tools) cancelSubscription(ctx context.Context, call *connectors.Call, in *cancelSubscriptionIn) (*legate.Result, error) {
	id, err := t.subscriptionID(call, in.Subscription)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if in.InvoiceNow {
		q.Set("invoice_now", "true")
	}
	if in.Prorate {
		q.Set("prorate", "true")
	}
	path := "/v1/subscriptions/" + url.PathEscape(id)
	out, err := saas.WriteOnce(ctx, t.Kit, call, saas.Write[Subscription]{
		// Stripe does not deduplicate a DELETE by its key: each attempt
		// reads the subscription first, and one canceled already is the
		// outcome, whoever canceled it.
		Send: func(ctx context.Context, key, marker string) (*Subscription, error) {
			var o subscriptionObject
			if err := t.Send(ctx, stcore.Request{Method: http.MethodGet, Path: path}, key, &o); err != nil {
				return nil, err
			}
			if o.Status != "canceled" {
				o = subscriptionObject{}
				if err := t.Send(ctx, stcore.Request{Method: http.MethodDelete, Path: path, Params: q, Idempotency: marker}, key, &o); err != nil {
					return nil, err
				}
			}
			m, err := t.subscriptionOf(call, &o)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "canceled subscription " + subscriptionText(*out)}, nil
}

func (t Tools) subscriptionOf(call *connectors.Call, o *subscriptionObject) (Subscription, error) {
	if o == nil || o.ID == "" {
		return Subscription{}, saas.Mapping("stripe", "a subscription without an id")
	}
	out := Subscription{
		Object:            t.Kit.Object(call, "subscription", stcore.Subscription.Name, o.ID),
		Status:            o.Status,
		CustomerRef:       t.RefOf(call, stcore.Customer, stcore.IDOf(o.Customer)),
		Items:             []SubscriptionItem{},
		CancelAtPeriodEnd: o.CancelAtPeriodEnd,
		CancelAt:          stcore.Unix(o.CancelAt),
		CanceledAt:        stcore.Unix(o.CanceledAt),
		CreatedAt:         stcore.Unix(o.Created),
	}
	out.URL = stcore.Dashboard(o.Livemode, "subscriptions", o.ID)
	if o.Items != nil {
		for _, it := range o.Items.Data {
			item := SubscriptionItem{ID: it.ID, Quantity: it.Quantity}
			if end := stcore.Unix(it.CurrentPeriodEnd); end.After(out.CurrentPeriodEnd) {
				out.CurrentPeriodEnd = end
			}
			if p := it.Price; p != nil {
				item.Price, item.PriceRef, item.Product = p.ID, t.RefOf(call, stcore.Price, p.ID), stcore.IDOf(p.Product)
				if p.UnitAmount != nil && p.Currency != "" {
					m := stcore.Money(*p.UnitAmount, p.Currency)
					item.UnitAmount = &m
				}
				if p.Recurring != nil {
					item.Interval = p.Recurring.Interval
				}
			}
			out.Items = append(out.Items, item)
		}
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

func subscriptionText(s Subscription) string {
	out := fmt.Sprintf("%s [%s]", s.ExternalID, s.Status)
	for _, it := range s.Items {
		out += fmt.Sprintf(" %d × %s", max(it.Quantity, 1), it.Price)
		if it.UnitAmount != nil {
			out += " at " + it.UnitAmount.Display
			if it.Interval != "" {
				out += "/" + it.Interval
			}
		}
	}
	if s.CancelAtPeriodEnd {
		out += ", ends at the period's end"
	}
	if !s.CurrentPeriodEnd.IsZero() {
		out += ", period ends " + s.CurrentPeriodEnd.Format("2006-01-02")
	}
	return out
}

// validItem says id has the shape of a subscription item's id.
func validItem(id string) bool {
	rest, ok := strings.CutPrefix(id, "si_")
	return ok && rest != "" && len(id) <= 255 && stcore.IDChars(rest, "")
}

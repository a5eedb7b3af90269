package stcore

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// CustomerObject is Stripe's customer, the fields read.
type CustomerObject struct {
	ID          string            `json:"id"`
	Deleted     bool              `json:"deleted"`
	Name        string            `json:"name"`
	Email       string            `json:"email"`
	Phone       string            `json:"phone"`
	Created     int64             `json:"created"`
	Livemode    bool              `json:"livemode"`
	Description string            `json:"description"`
	Currency    string            `json:"currency"`
	Balance     int64             `json:"balance"`
	Delinquent  bool              `json:"delinquent"`
	Metadata    map[string]string `json:"metadata"`
}

// ChargeObject is Stripe's charge, the fields read.
type ChargeObject struct {
	ID             string            `json:"id"`
	Amount         int64             `json:"amount"`
	AmountRefunded int64             `json:"amount_refunded"`
	Currency       string            `json:"currency"`
	Status         string            `json:"status"`
	Description    string            `json:"description"`
	Created        int64             `json:"created"`
	Livemode       bool              `json:"livemode"`
	Customer       *Expandable       `json:"customer"`
	Paid           bool              `json:"paid"`
	Captured       bool              `json:"captured"`
	Refunded       bool              `json:"refunded"`
	Disputed       bool              `json:"disputed"`
	PaymentIntent  *Expandable       `json:"payment_intent"`
	FailureCode    string            `json:"failure_code"`
	Metadata       map[string]string `json:"metadata"`
}

// RefundObject is Stripe's refund, the fields read.
type RefundObject struct {
	ID            string      `json:"id"`
	Amount        int64       `json:"amount"`
	Currency      string      `json:"currency"`
	Status        string      `json:"status"`
	Reason        string      `json:"reason"`
	Created       int64       `json:"created"`
	Charge        *Expandable `json:"charge"`
	PaymentIntent *Expandable `json:"payment_intent"`
	FailureReason string      `json:"failure_reason"`
	PendingReason string      `json:"pending_reason"`
}

// Dashboard is the Dashboard page of an object.
func Dashboard(livemode bool, path, id string) string {
	if livemode {
		return "https://dashboard.stripe.com/" + path + "/" + id
	}
	return "https://dashboard.stripe.com/test/" + path + "/" + id
}

// CustomerOf converts a customer to customer.v1.
func (c *Core) CustomerOf(call *connectors.Call, cu *CustomerObject) (model.Customer, error) {
	if cu == nil || cu.ID == "" {
		return model.Customer{}, saas.Mapping("stripe", "a customer without an id")
	}
	if cu.Deleted {
		return model.Customer{}, legate.Errorf(legate.CodeNotFound, "stripe: customer %s was deleted", cu.ID)
	}
	out := model.Customer{
		Object:    c.Kit.Object(call, model.CustomerV1, Customer.Name, cu.ID),
		Name:      cu.Name,
		Email:     cu.Email,
		CreatedAt: Unix(cu.Created),
	}
	out.URL = Dashboard(cu.Livemode, "customers", cu.ID)
	meta := map[string]any{"livemode": cu.Livemode}
	if cu.Description != "" {
		meta["description"] = cu.Description
	}
	if cu.Phone != "" {
		meta["phone"] = cu.Phone
	}
	if cu.Currency != "" {
		meta["currency"] = cu.Currency
	}
	if cu.Balance != 0 {
		meta["balance"] = cu.Balance
	}
	if cu.Delinquent {
		meta["delinquent"] = true
	}
	if len(cu.Metadata) > 0 {
		meta["metadata"] = cu.Metadata
	}
	out.ProviderMetadata = meta
	return out, nil
}

// ChargeOf converts a charge to charge.v1.
func (c *Core) ChargeOf(call *connectors.Call, ch *ChargeObject) (model.Charge, error) {
	if ch == nil || ch.ID == "" || ch.Currency == "" {
		return model.Charge{}, saas.Mapping("stripe", "a charge without an id or a currency")
	}
	out := model.Charge{
		Object:      c.Kit.Object(call, model.ChargeV1, Charge.Name, ch.ID),
		Money:       model.Money{Amount: ch.Amount, Currency: strings.ToLower(ch.Currency)},
		Status:      ch.Status,
		Refunded:    ch.AmountRefunded,
		Description: ch.Description,
		CreatedAt:   Unix(ch.Created),
	}
	out.URL = Dashboard(ch.Livemode, "payments", ch.ID)
	out.CustomerRef = c.RefOf(call, Customer, IDOf(ch.Customer))
	meta := map[string]any{"livemode": ch.Livemode, "paid": ch.Paid, "captured": ch.Captured}
	if ch.Refunded {
		meta["fully_refunded"] = true
	}
	if ch.Disputed {
		meta["disputed"] = true
	}
	if id := IDOf(ch.PaymentIntent); id != "" {
		meta["payment_intent"] = id
	}
	if ch.FailureCode != "" {
		meta["failure_code"] = ch.FailureCode
	}
	if len(ch.Metadata) > 0 {
		meta["metadata"] = ch.Metadata
	}
	out.ProviderMetadata = meta
	return out, nil
}

// RefundOf converts a refund to refund.v1.
func (c *Core) RefundOf(call *connectors.Call, r *RefundObject) (model.Refund, error) {
	if r == nil || r.ID == "" || r.Currency == "" {
		return model.Refund{}, saas.Mapping("stripe", "a refund without an id or a currency")
	}
	out := model.Refund{
		Object:    c.Kit.Object(call, model.RefundV1, Refund.Name, r.ID),
		Money:     model.Money{Amount: r.Amount, Currency: strings.ToLower(r.Currency)},
		Status:    r.Status,
		Reason:    r.Reason,
		CreatedAt: Unix(r.Created),
	}
	meta := map[string]any{}
	if id := IDOf(r.Charge); id != "" {
		out.ChargeRef = c.Kit.Ref(call, Charge.Name, id)
		meta["charge"] = id
	}
	if id := IDOf(r.PaymentIntent); id != "" {
		meta["payment_intent"] = id
	}
	if r.FailureReason != "" {
		meta["failure_reason"] = r.FailureReason
	}
	if r.PendingReason != "" {
		meta["pending_reason"] = r.PendingReason
	}
	out.ProviderMetadata = meta
	return out, nil
}

// RefOf is the ref of the object of kind with id, "" for no id.
func (c *Core) RefOf(call *connectors.Call, kind Kind, id string) string {
	if id == "" {
		return ""
	}
	return c.Kit.Ref(call, kind.Name, id)
}

// Unix is a time of Stripe's (seconds), zero for none.
func Unix(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// Amount is an amount of money in a result: in the currency's smallest
// unit, as charge.v1's, with the amount written for people beside it.
type Amount struct {
	Amount   int64  `json:"amount" jsonschema:"in the currency's smallest unit, e.g. cents"`
	Currency string `json:"currency" jsonschema:"ISO 4217, lower case"`
	Display  string `json:"display" jsonschema:"the amount for people, e.g. 12.34 usd"`
}

// Money is amount in currency's smallest unit as an Amount.
func Money(amount int64, currency string) Amount {
	currency = strings.ToLower(currency)
	return Amount{Amount: amount, Currency: currency, Display: FormatMoney(amount, currency)}
}

// zeroDecimal are the currencies whose smallest unit is the unit.
var zeroDecimal = []string{"bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf"}

// threeDecimal are the currencies whose smallest unit is a thousandth.
var threeDecimal = []string{"bhd", "jod", "kwd", "omr", "tnd"}

// FormatMoney writes an amount in smallest units for people: 12.34 usd.
func FormatMoney(amount int64, currency string) string {
	currency = strings.ToLower(currency)
	if slices.Contains(zeroDecimal, currency) {
		return fmt.Sprintf("%d %s", amount, currency)
	}
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	if slices.Contains(threeDecimal, currency) {
		return fmt.Sprintf("%s%d.%03d %s", sign, amount/1000, amount%1000, currency)
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, amount/100, amount%100, currency)
}

// CheckCurrency refuses what is not a three-letter currency code.
func CheckCurrency(field, currency string) error {
	if len(currency) != 3 || strings.Trim(strings.ToLower(currency), "abcdefghijklmnopqrstuvwxyz") != "" {
		return legate.Errorf(legate.CodeInvalidArgument, "stripe: %s: a three-letter ISO 4217 code (usd, eur), got %q", field, currency)
	}
	return nil
}

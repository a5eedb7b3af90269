package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// answer is what the transport saw of one attempt's response: its status
// and Retry-After, which an error body that is not Stripe's does not carry.
type answer struct {
	status     int
	retryAfter time.Duration
}

type answerKey struct{}

// withAnswer returns ctx carrying a new answer for the recorder to fill.
func withAnswer(ctx context.Context) (context.Context, *answer) {
	a := &answer{}
	return context.WithValue(ctx, answerKey{}, a), a
}

// recorder fills the answer of the request's context, if any.
type recorder struct{ next http.RoundTripper }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		if a, ok := req.Context().Value(answerKey{}).(*answer); ok {
			a.status = resp.StatusCode
			a.retryAfter, _ = netguard.RetryAfter(resp.Header, time.Now())
		}
	}
	return resp, err
}

// mapError makes an error of a request canonical. ctx is the attempt's,
// ans what its transport saw.
func mapError(ctx context.Context, ans *answer, err error) error {
	if err == nil {
		return nil
	}
	var se *apiError
	if errors.As(err, &se) {
		status := se.HTTPStatusCode
		switch {
		case status == http.StatusUnauthorized:
			// Stripe's message quotes part of the key: not passed on.
			return saas.StatusError("stripe", status, 0, "Stripe refused the secret key (401): it is wrong, expired or revoked")
		case se.Type == errorTypeIdempotency:
			return &legate.Error{Code: legate.CodeConflict, Message: "stripe: Stripe holds another request under this call's idempotency key: " + se.Msg}
		case se.Code == errorCodeRateLimit && status != http.StatusTooManyRequests:
			return saas.RateLimited("stripe", ans.retryAfter)
		}
		msg := "Stripe answered " + strconv.Itoa(status)
		if se.Code != "" {
			msg += " " + se.Code
		}
		if se.Msg != "" {
			msg += ": " + se.Msg
		}
		return saas.StatusError("stripe", status, ans.retryAfter, msg)
	}
	switch {
	case ans.status >= 400:
		return saas.StatusError("stripe", ans.status, ans.retryAfter, "Stripe answered "+strconv.Itoa(ans.status)+" without a Stripe error in the body")
	case errors.Is(err, errNotJSON):
		// The decoder's message may quote the body: not passed on.
		return saas.Mapping("stripe", "a %d answer whose body is not the JSON expected", ans.status)
	}
	return saas.Classify(ctx, err, "stripe")
}

// The kinds of the refs the connector hands out.
const (
	kindCustomer = "customer"
	kindCharge   = "charge"
	kindRefund   = "refund"
)

var (
	customerID = regexp.MustCompile(`^cus_[A-Za-z0-9]{1,250}$`)
	chargeID   = regexp.MustCompile(`^(ch|py)_[A-Za-z0-9]{1,250}$`)
)

// dashboard is the Dashboard page of an object.
func dashboard(livemode bool, path, id string) string {
	if livemode {
		return "https://dashboard.stripe.com/" + path + "/" + id
	}
	return "https://dashboard.stripe.com/test/" + path + "/" + id
}

// customerOf converts a customer to customer.v1.
func (c *Connector) customerOf(call *connectors.Call, cu *customer) (model.Customer, error) {
	if cu == nil || cu.ID == "" {
		return model.Customer{}, saas.Mapping("stripe", "a customer without an id")
	}
	if cu.Deleted {
		return model.Customer{}, legate.Errorf(legate.CodeNotFound, "stripe: customer %s was deleted", cu.ID)
	}
	out := model.Customer{
		Object:    c.kit.Object(call, model.CustomerV1, kindCustomer, cu.ID),
		Name:      cu.Name,
		Email:     cu.Email,
		CreatedAt: unix(cu.Created),
	}
	out.URL = dashboard(cu.Livemode, "customers", cu.ID)
	meta := map[string]any{"livemode": cu.Livemode}
	if cu.Description != "" {
		meta["description"] = cu.Description
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

// chargeOf converts a charge to charge.v1.
func (c *Connector) chargeOf(call *connectors.Call, ch *charge) (model.Charge, error) {
	if ch == nil || ch.ID == "" || ch.Currency == "" {
		return model.Charge{}, saas.Mapping("stripe", "a charge without an id or a currency")
	}
	out := model.Charge{
		Object:      c.kit.Object(call, model.ChargeV1, kindCharge, ch.ID),
		Money:       model.Money{Amount: ch.Amount, Currency: strings.ToLower(ch.Currency)},
		Status:      ch.Status,
		Refunded:    ch.AmountRefunded,
		Description: ch.Description,
		CreatedAt:   unix(ch.Created),
	}
	out.URL = dashboard(ch.Livemode, "payments", ch.ID)
	if ch.Customer != nil && ch.Customer.ID != "" {
		out.CustomerRef = c.kit.Ref(call, kindCustomer, ch.Customer.ID)
	}
	meta := map[string]any{"livemode": ch.Livemode, "paid": ch.Paid, "captured": ch.Captured}
	if ch.Refunded {
		meta["fully_refunded"] = true
	}
	if ch.Disputed {
		meta["disputed"] = true
	}
	if ch.PaymentIntent != nil && ch.PaymentIntent.ID != "" {
		meta["payment_intent"] = ch.PaymentIntent.ID
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

// refundOf converts a refund to refund.v1.
func (c *Connector) refundOf(call *connectors.Call, r *refund) (model.Refund, error) {
	if r == nil || r.ID == "" || r.Currency == "" {
		return model.Refund{}, saas.Mapping("stripe", "a refund without an id or a currency")
	}
	out := model.Refund{
		Object:    c.kit.Object(call, model.RefundV1, kindRefund, r.ID),
		Money:     model.Money{Amount: r.Amount, Currency: strings.ToLower(r.Currency)},
		Status:    r.Status,
		Reason:    r.Reason,
		CreatedAt: unix(r.Created),
	}
	meta := map[string]any{}
	if r.Charge != nil && r.Charge.ID != "" {
		out.ChargeRef = c.kit.Ref(call, kindCharge, r.Charge.ID)
		meta["charge"] = r.Charge.ID
	}
	if r.PaymentIntent != nil && r.PaymentIntent.ID != "" {
		meta["payment_intent"] = r.PaymentIntent.ID
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

func unix(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// zeroDecimal are the currencies whose smallest unit is the unit.
var zeroDecimal = []string{"bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf"}

// formatMoney writes an amount in smallest units for people: 12.34 usd.
func formatMoney(amount int64, currency string) string {
	currency = strings.ToLower(currency)
	if slices.Contains(zeroDecimal, currency) {
		return fmt.Sprintf("%d %s", amount, currency)
	}
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, amount/100, amount%100, currency)
}

var _ http.RoundTripper = (*recorder)(nil)

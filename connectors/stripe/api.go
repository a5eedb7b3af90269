package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The connector speaks Stripe's REST API itself: form-encoded requests,
// JSON answers, and the few objects its tools read, typed here.
// stripe-go's single package holds the whole API and was a tenth of the
// binary for five endpoints.

// apiVersion is the Stripe-Version sent with each request: the version the
// objects below are read at (stripe-go v82's).
const apiVersion = "2025-08-27.basil"

// userAgent names the client to Stripe.
const userAgent = "legate-stripe/1"

// maxBody bounds an answer read.
const maxBody = 16 << 20

// apiError is Stripe's error object, with the answer's status.
type apiError struct {
	HTTPStatusCode int    `json:"-"`
	Type           string `json:"type"`
	Code           string `json:"code"`
	Msg            string `json:"message"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("stripe: %d %s %s: %s", e.HTTPStatusCode, e.Type, e.Code, e.Msg)
}

// The error types and codes mapError tells apart.
const (
	errorTypeIdempotency = "idempotency_error"
	errorCodeRateLimit   = "rate_limit"
)

// errNotJSON is a 2xx answer whose body is not the JSON expected.
var errNotJSON = errors.New("stripe: the answer's body is not the JSON expected")

// expandable is an object Stripe sends as its id, or whole when expanded.
type expandable struct{ ID string }

func (e *expandable) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.ID)
	}
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	e.ID = o.ID
	return nil
}

type customer struct {
	ID          string            `json:"id"`
	Deleted     bool              `json:"deleted"`
	Name        string            `json:"name"`
	Email       string            `json:"email"`
	Created     int64             `json:"created"`
	Livemode    bool              `json:"livemode"`
	Description string            `json:"description"`
	Currency    string            `json:"currency"`
	Balance     int64             `json:"balance"`
	Delinquent  bool              `json:"delinquent"`
	Metadata    map[string]string `json:"metadata"`
}

type charge struct {
	ID             string            `json:"id"`
	Amount         int64             `json:"amount"`
	AmountRefunded int64             `json:"amount_refunded"`
	Currency       string            `json:"currency"`
	Status         string            `json:"status"`
	Description    string            `json:"description"`
	Created        int64             `json:"created"`
	Livemode       bool              `json:"livemode"`
	Customer       *expandable       `json:"customer"`
	Paid           bool              `json:"paid"`
	Captured       bool              `json:"captured"`
	Refunded       bool              `json:"refunded"`
	Disputed       bool              `json:"disputed"`
	PaymentIntent  *expandable       `json:"payment_intent"`
	FailureCode    string            `json:"failure_code"`
	Metadata       map[string]string `json:"metadata"`
}

type refund struct {
	ID            string      `json:"id"`
	Amount        int64       `json:"amount"`
	Currency      string      `json:"currency"`
	Status        string      `json:"status"`
	Reason        string      `json:"reason"`
	Created       int64       `json:"created"`
	Charge        *expandable `json:"charge"`
	PaymentIntent *expandable `json:"payment_intent"`
	FailureReason string      `json:"failure_reason"`
	PendingReason string      `json:"pending_reason"`
}

type account struct {
	ID              string `json:"id"`
	ChargesEnabled  bool   `json:"charges_enabled"`
	BusinessProfile *struct {
		Name string `json:"name"`
	} `json:"business_profile"`
}

type balance struct {
	Livemode  bool `json:"livemode"`
	Available []struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"available"`
}

type chargeList struct {
	HasMore bool      `json:"has_more"`
	Data    []*charge `json:"data"`
}

// anyList is a list of any objects, for the connection test.
type anyList struct {
	HasMore bool              `json:"has_more"`
	Data    []json.RawMessage `json:"data"`
}

// request is one request to Stripe: its params, form-encoded (in the query
// of a GET), and for a write its Idempotency-Key.
type request struct {
	method, path string
	params       url.Values
	idempotency  string
}

// do sends r with key and decodes a 2xx answer into v; any other answer
// is an *apiError, or errNotJSON wrapped when the body is not JSON.
func (c *Connector) do(ctx context.Context, r request, key string, v any) error {
	u := c.base + r.path
	var body io.Reader
	if r.method == http.MethodGet {
		if len(r.params) > 0 {
			u += "?" + r.params.Encode()
		}
	} else {
		body = strings.NewReader(r.params.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Stripe-Version", apiVersion)
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.idempotency != "" {
		req.Header.Set("Idempotency-Key", r.idempotency)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error *apiError `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == nil {
			return fmt.Errorf("stripe: a %d answer without a Stripe error in its body", resp.StatusCode)
		}
		e.Error.HTTPStatusCode = resp.StatusCode
		return e.Error
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return nil
}

//go:build !custom || connector_stripe

package hooks

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/legate-mcp/legate/store"
)

func init() {
	providers["stripe"] = provider{credential: "webhook_secret", verify: verifyStripe, read: readStripe}
}

// Stripe signs each delivery with the endpoint's signing secret (whsec_…):
// Stripe-Signature holds t=<unix time> and v1=<HMAC-SHA256 of "t.body">,
// checked by stripe-go with a tolerance of 300 s. An event of another API
// version than stripe-go's is accepted: Legate stores it as sent.
func verifyStripe(d *delivery, secret string) error {
	_, err := webhook.ConstructEventWithOptions(d.body, d.header.Get("Stripe-Signature"), secret,
		webhook.ConstructEventOptions{Tolerance: Tolerance, IgnoreAPIVersionMismatch: true})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, webhook.ErrTooOld):
		return refuse(ReasonStale, err)
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrNoValidSignature):
		return refuse(ReasonSignature, err)
	}
	return refuse(ReasonMalformed, err)
}

// readStripe reads an event: its kind is Stripe's type (charge.refunded),
// its id the event's (evt_…), its object the id of data.object.
func readStripe(d *delivery) (*store.Event, *answer, error) {
	var e stripe.Event
	if err := json.Unmarshal(d.body, &e); err != nil {
		return nil, nil, refuse(ReasonMalformed, err)
	}
	if e.ID == "" || e.Type == "" {
		return nil, nil, refuse(ReasonMalformed, errors.New("no event id or type"))
	}
	ev := &store.Event{ProviderID: e.ID, Kind: string(e.Type), Time: time.Unix(e.Created, 0), Payload: d.body}
	if e.Data != nil {
		ev.Object, _ = e.Data.Object["id"].(string)
		ev.Actor, _ = e.Data.Object["customer"].(string)
	}
	var request string
	if e.Request != nil {
		request = e.Request.ID
	}
	ev.Meta = meta("account", e.Account, "livemode", strconv.FormatBool(e.Livemode), "api_version", e.APIVersion, "request", request)
	return ev, nil, nil
}

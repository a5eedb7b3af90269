package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

// The reasons a delivery is refused, the values of the refused counter's
// reason label.
const (
	ReasonSignature = "bad_signature"   // missing or wrong signature
	ReasonStale     = "stale_timestamp" // signed too long ago (or ahead)
	ReasonMalformed = "malformed"       // verified, but not an event this provider sends
)

// refusal is a delivery refused for a reason.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.reason + ": " + r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refuse(reason string, err error) error { return &refusal{reason: reason, err: err} }

// Tolerance is how far a signed timestamp (Slack's, Stripe's) may be from
// the receiver's clock.
const Tolerance = 5 * time.Minute

// delivery is one request to /hooks/{instance}, its body read.
type delivery struct {
	header http.Header
	body   []byte
	now    time.Time
}

// answer is what a provider's set-up request is answered with instead of
// storing an event.
type answer struct {
	body any
}

// provider is what Legate knows of one provider's webhooks.
type provider struct {
	// credential is the instance credential holding the signing secret.
	credential string
	// handshake, when set, answers an unsigned set-up request, given the
	// instance's secret ("" when it cannot be resolved yet): ok false when
	// d is not one.
	handshake func(d *delivery, secret string) (a *answer, ok bool, err error)
	// verify checks d's signature with secret, returning a *refusal.
	verify func(d *delivery, secret string) error
	// read reads a verified delivery: the event to store, or the answer
	// of a signed set-up request (Slack's url_verification).
	read func(d *delivery) (*store.Event, *answer, error)
}

// providers are the connector types whose instances receive webhooks, by
// type name; each declares its credential in its own connector package.
// A provider's file registers it from init, under the build tags of its
// connector type's connectors/all file: a custom build without the type
// links neither its connector nor its provider's library here.
var providers = map[string]provider{}

// fresh checks a signed Unix timestamp against now.
func fresh(ts string, now time.Time) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return refuse(ReasonSignature, fmt.Errorf("timestamp %q is not a number", ts))
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return refuse(ReasonStale, fmt.Errorf("signed %s from now, more than %s", d.Round(time.Second), Tolerance))
	}
	return nil
}

// hmacHex is the hex HMAC-SHA256 of the parts with key.
func hmacHex(key string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		m.Write(p)
	}
	out := make([]byte, hex.EncodedLen(sha256.Size))
	hex.Encode(out, m.Sum(nil))
	return out
}

// equalSig compares a received signature with the expected one in
// constant time.
func equalSig(got string, want []byte) bool {
	return hmac.Equal([]byte(strings.ToLower(got)), want)
}

// errNoSignature is a delivery without its signature header.
var errNoSignature = errors.New("no signature")

// field reads a JSON object's string or number field as text.
func field(m map[string]json.RawMessage, name string) string {
	raw, ok := m[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// object decodes a JSON object's member object (nil when absent).
func object(m map[string]json.RawMessage, name string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	if raw, ok := m[name]; ok {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

// path follows member objects and returns the last one's field.
func path(m map[string]json.RawMessage, names ...string) string {
	for _, n := range names[:len(names)-1] {
		if m = object(m, n); m == nil {
			return ""
		}
	}
	return field(m, names[len(names)-1])
}

// meta encodes the small, sanitized metadata of an event, leaving out
// empty values.
func meta(kv ...string) []byte {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			m[kv[i]] = kv[i+1]
		}
	}
	b, _ := json.Marshal(m)
	return b
}

package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery.
const (
	// DeliveryHeader carries the delivery id, the same on every attempt of
	// one delivery: a receiver dedupes on it.
	DeliveryHeader = "X-Legate-Delivery"
	// EventHeader carries the call's event argument, when given.
	EventHeader = "X-Legate-Event"
	// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256>" when
	// the instance has a signing_secret.
	SignatureHeader = "X-Legate-Signature"
)

// DefaultTolerance is the timestamp tolerance Verify applies when given a
// non-positive one.
const DefaultTolerance = 5 * time.Minute

// The errors of Verify. A receiver answers each with 400 or 401 and does
// not process the body.
var (
	// ErrSignatureHeader: the header is missing or malformed.
	ErrSignatureHeader = errors.New("webhook: malformed signature header")
	// ErrSignatureMismatch: no signature matches the body and the secret;
	// the body was altered or signed with another secret.
	ErrSignatureMismatch = errors.New("webhook: signature mismatch")
	// ErrTimestamp: the signature is authentic but its timestamp is outside
	// the tolerance; it may be a replay.
	ErrTimestamp = errors.New("webhook: signature timestamp outside tolerance")
)

// Sign returns the SignatureHeader value for body sent at t: the
// HMAC-SHA256 of "<unix seconds>.<body>" keyed with secret, in hex.
// The sender signs each attempt afresh, so t is the attempt's time.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a SignatureHeader value against the raw body, as a
// receiver must before trusting a delivery: one of its v1 signatures must
// be the HMAC-SHA256 of "<t>.<body>" under secret (compared in constant
// time), and t must be within tolerance of now (DefaultTolerance when
// tolerance is not positive). Unknown keys in the header are ignored;
// several v1 values are allowed, for secret rotation.
func Verify(secret, header string, body []byte, tolerance time.Duration, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("%w: empty secret", ErrSignatureMismatch)
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrSignatureHeader
		}
		switch k {
		case "t":
			if ts != "" {
				return ErrSignatureHeader
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil {
				return ErrSignatureHeader
			}
			sigs = append(sigs, sig)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrSignatureHeader
	}
	want := mac(secret, ts, body)
	matched := false
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			matched = true
		}
	}
	if !matched {
		return ErrSignatureMismatch
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now", ErrTimestamp, time.Unix(unix, 0).UTC().Format(time.RFC3339), d.Round(time.Second))
	}
	return nil
}

package webhook_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors/webhook"
)

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"order":42}`)
	good := webhook.Sign("s3cret", now, body)
	other := webhook.Sign("other", now, body)
	ts := "t=" + strconv.FormatInt(now.Unix(), 10)
	tests := map[string]struct {
		secret, header string
		body           []byte
		tolerance      time.Duration
		at             time.Time
		want           error
	}{
		"valid":                    {"s3cret", good, body, time.Minute, now, nil},
		"valid within tolerance":   {"s3cret", good, body, time.Minute, now.Add(59 * time.Second), nil},
		"clock behind the sender":  {"s3cret", good, body, time.Minute, now.Add(-59 * time.Second), nil},
		"default tolerance":        {"s3cret", good, body, 0, now.Add(4 * time.Minute), nil},
		"default tolerance passed": {"s3cret", good, body, 0, now.Add(6 * time.Minute), webhook.ErrTimestamp},
		"stale":                    {"s3cret", good, body, time.Minute, now.Add(2 * time.Minute), webhook.ErrTimestamp},
		"from the future":          {"s3cret", good, body, time.Minute, now.Add(-2 * time.Minute), webhook.ErrTimestamp},
		"wrong secret":             {"wrong", good, body, time.Minute, now, webhook.ErrSignatureMismatch},
		"empty secret":             {"", good, body, time.Minute, now, webhook.ErrSignatureMismatch},
		"tampered body":            {"s3cret", good, []byte(`{"order":43}`), time.Minute, now, webhook.ErrSignatureMismatch},
		"timestamp swapped":        {"s3cret", "t=1800000001," + good[len(ts)+1:], body, time.Minute, now, webhook.ErrSignatureMismatch},
		"rotation: second matches": {"s3cret", other + "," + good[len(ts)+1:], body, time.Minute, now, nil},
		"unknown keys ignored":     {"s3cret", good + ",v0=abc", body, time.Minute, now, nil},
		"spaces tolerated":         {"s3cret", ts + ", " + good[len(ts)+1:], body, time.Minute, now, nil},
		"empty header":             {"s3cret", "", body, time.Minute, now, webhook.ErrSignatureHeader},
		"no v1":                    {"s3cret", ts, body, time.Minute, now, webhook.ErrSignatureHeader},
		"no t":                     {"s3cret", good[len(ts)+1:], body, time.Minute, now, webhook.ErrSignatureHeader},
		"two t":                    {"s3cret", ts + "," + good, body, time.Minute, now, webhook.ErrSignatureHeader},
		"bad hex":                  {"s3cret", ts + ",v1=zz", body, time.Minute, now, webhook.ErrSignatureHeader},
		"bad t":                    {"s3cret", "t=soon," + good[len(ts)+1:], body, time.Minute, now, webhook.ErrSignatureHeader},
		"no equals":                {"s3cret", "garbage", body, time.Minute, now, webhook.ErrSignatureHeader},
		"short signature":          {"s3cret", ts + ",v1=ab", body, time.Minute, now, webhook.ErrSignatureMismatch},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := webhook.Verify(tc.secret, tc.header, tc.body, tc.tolerance, tc.at)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify: %v; want %v", err, tc.want)
			}
		})
	}
}

func TestSignFormat(t *testing.T) {
	// A fixed vector computed independently (Python's hmac module), so that
	// receivers in other languages can check theirs:
	// HMAC-SHA256("key", "1700000000.{}").
	got := webhook.Sign("key", time.Unix(1_700_000_000, 0), []byte("{}"))
	const want = "t=1700000000,v1=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae"
	if got != want {
		t.Fatalf("Sign = %q; want %q", got, want)
	}
}

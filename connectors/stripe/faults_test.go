package stripe_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Every tool's case passes when the first request to each endpoint is
// refused with a 5xx or with a 429 and Retry-After: the connector retries
// each, reads and writes alike, and the case's checks hold. A write is
// retried with the key of its first attempt: every request that writes
// carries one, and none reached stripe-mock twice. A tool sending three
// requests meets three refusals, hence max_attempts 6.
func TestEveryToolThroughFaults(t *testing.T) {
	faults := map[string]func(w http.ResponseWriter){
		"500": stripeError(http.StatusInternalServerError, "", "An unknown error occurred"),
		"502 not from Stripe": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>bad gateway</html>"))
		},
		"429 Retry-After": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			stripeError(http.StatusTooManyRequests, "rate_limit", "Too many requests hit the API too quickly.")(w)
		},
	}
	for fault, answer := range faults {
		for name, run := range toolCases {
			t.Run(fault+"/"+name, func(t *testing.T) {
				f := newFront(t)
				var mu sync.Mutex
				refused := map[string]bool{}
				f.fault = func(n int, w http.ResponseWriter, r *http.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					if refused[r.Method+r.URL.Path] {
						return false
					}
					refused[r.Method+r.URL.Path] = true
					answer(w)
					return true
				}
				run(t, f, build(t, f, "stripe", "max_attempts: 6"))
				if len(refused) == 0 {
					t.Fatal("no request was refused")
				}
				f.mu.Lock()
				defer f.mu.Unlock()
				keys := map[string][]string{}
				for _, s := range f.requests {
					if s.Method == http.MethodGet {
						continue
					}
					if !strings.HasPrefix(s.Idempotency, "lg1-") {
						t.Fatalf("%s %s without an idempotency key", s.Method, s.Path)
					}
					keys[s.Method+s.Path] = append(keys[s.Method+s.Path], s.Idempotency)
				}
				for k, n := range f.forwarded {
					if n != 1 {
						t.Fatalf("key %s reached stripe-mock %d times", k, n)
					}
				}
				for path, ks := range keys {
					if path != "POST/v1/invoiceitems" && len(ks) > 1 && ks[0] != ks[1] {
						t.Fatalf("%s retried under another key: %v", path, ks)
					}
				}
			})
		}
	}
}

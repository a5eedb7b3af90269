package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/authtest"
)

func TestRotatedKeyIsFetchedAtOnce(t *testing.T) {
	d := authtest.NewIDP(t)
	h := newAuth(t, d.Config(""), tokenStore(t)).Middleware()(whoami)
	principalOf(t, call(h, d.Sign(d.Claims("alice"), d.Key)))

	k2 := d.NewKey("k2")
	d.Publish(k2)
	start := time.Now()
	if got := principalOf(t, call(h, d.Sign(d.Claims("alice"), k2))); got.Name != "alice" {
		t.Fatalf("principal %+v", got)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("the rotated key took %s", el)
	}
}

func TestUnknownKeyIDsAreRateLimited(t *testing.T) {
	d := authtest.NewIDP(t)
	h := newAuth(t, d.Config(""), tokenStore(t)).Middleware()(whoami)
	principalOf(t, call(h, d.Sign(d.Claims("alice"), d.Key)))

	// A burst of tokens naming keys the issuer never published.
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			tok := d.Sign(d.Claims("mallory"), d.NewKey("unknown-"+strings.Repeat("x", i)))
			if w := call(h, tok); w.Code != http.StatusUnauthorized {
				t.Errorf("status %d", w.Code)
			}
		})
	}
	wg.Wait()
	// One fetch at first, and at most one a second after it.
	if n, most := d.Fetches.Load(), 2+int32(time.Since(start)/time.Second); n > most {
		t.Fatalf("the keys were fetched %d times in %s, want at most %d", n, time.Since(start), most)
	}
}

// TestCloseEndsAFetchInFlight: Close cancels a fetch of the issuer's keys
// that hangs, and returns once it has ended.
func TestCloseEndsAFetchInFlight(t *testing.T) {
	d := authtest.NewIDP(t)
	asked := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	doc := fmt.Sprintf("auth:\n  resource: %s\n  oauth:\n    issuer: %s\n    jwks_url: %s/jwks.json\n", authtest.Resource, d.Issuer, hang.URL)
	a := newAuth(t, doc, tokenStore(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Verify(ctx, d.Sign(d.Claims("alice"), d.Key), nil)
		done <- err
	}()
	<-asked
	cancel()
	if err := <-done; err == nil {
		t.Fatal("verified without keys")
	}
	if !auth.Fetching(a) {
		t.Fatal("the fetch ended with the request that started it")
	}
	start := time.Now()
	a.Close()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Close took %s", el)
	}
	if auth.Fetching(a) {
		t.Fatal("a fetch still runs after Close")
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Opener opens the store a URL names. It gets the URL whole, as given to
// Open (or, for a plain path, with DefaultScheme put before it).
type Opener func(ctx context.Context, url string) (Store, error)

// DefaultScheme is the backend of a store URL that is a plain path.
const DefaultScheme = "sqlite"

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// Register makes a backend available under a URL scheme; a backend calls
// it from init. It panics if open is nil or the scheme empty or taken:
// both are mistakes in the binary, not in its configuration.
func Register(scheme string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if open == nil {
		panic("store: Register opener is nil")
	}
	if scheme == "" {
		panic("store: Register scheme is empty")
	}
	if _, dup := openers[scheme]; dup {
		panic("store: Register called twice for scheme " + scheme)
	}
	openers[scheme] = open
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	openersMu.RLock()
	defer openersMu.RUnlock()
	out := make([]string, 0, len(openers))
	for s := range openers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Open opens the store named by url, scheme://rest, with the backend
// registered for its scheme: sqlite:///var/lib/legate/legate.db. A url
// without a scheme is a path, opened with DefaultScheme's backend.
func Open(ctx context.Context, url string) (Store, error) {
	if url == "" {
		return nil, errors.New("no store url: want scheme://..., " + known())
	}
	scheme, ok := schemeOf(url)
	if !ok {
		scheme, url = DefaultScheme, DefaultScheme+"://"+url
	}
	openersMu.RLock()
	open := openers[scheme]
	openersMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("store url %q: unknown scheme %q, %s", url, scheme, known())
	}
	return open(ctx, url)
}

// known lists the registered schemes for an error message.
func known() string {
	if s := Schemes(); len(s) > 0 {
		return "known: " + strings.Join(s, ", ")
	}
	return "no store backend is built in"
}

// schemeOf returns the scheme of url (RFC 3986: a letter, then letters,
// digits, "+", "-" or "."; lower-cased), if it has one. A single letter is
// a Windows drive (C:\state), not a scheme.
func schemeOf(url string) (string, bool) {
	scheme, _, found := strings.Cut(url, ":")
	if !found || len(scheme) < 2 {
		return "", false
	}
	for i, r := range scheme {
		letter := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || !('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false
		}
	}
	return strings.ToLower(scheme), true
}

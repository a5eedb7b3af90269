package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/store"
)

// opened records the URL each fake backend was asked to open.
var opened = map[string]string{}

func fake(scheme string) store.Opener {
	return func(_ context.Context, url string) (store.Store, error) {
		opened[scheme] = url
		return nil, nil
	}
}

// This test binary has no real backend: fakes stand in for them, the
// default scheme's included.
func init() {
	store.Register(store.DefaultScheme, fake(store.DefaultScheme))
	store.Register("fake-b", fake("fake-b"))
	store.Register("fake-a", fake("fake-a"))
}

func TestSchemesAreSorted(t *testing.T) {
	if got, want := store.Schemes(), []string{"fake-a", "fake-b", store.DefaultScheme}; !slices.Equal(got, want) {
		t.Fatalf("schemes %q, want %q", got, want)
	}
}

func TestRegisterRefusesMistakes(t *testing.T) {
	for name, tc := range map[string]struct {
		scheme string
		open   store.Opener
	}{
		"nil opener":   {"fake-nil", nil},
		"empty scheme": {"", fake("")},
		"taken scheme": {"fake-a", fake("fake-a")},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			store.Register(tc.scheme, tc.open)
		})
	}
	if slices.Contains(store.Schemes(), "fake-nil") {
		t.Fatal("a refused registration is listed")
	}
}

func TestOpenPicksTheBackendOfTheScheme(t *testing.T) {
	for name, tc := range map[string]struct {
		url, scheme, got string
	}{
		"a scheme":                     {"fake-a://db/x", "fake-a", "fake-a://db/x"},
		"another scheme":               {"fake-b:opaque", "fake-b", "fake-b:opaque"},
		"the scheme in capitals":       {"FAKE-A://x", "fake-a", "FAKE-A://x"},
		"an absolute path":             {"/var/lib/legate/legate.db", store.DefaultScheme, store.DefaultScheme + ":///var/lib/legate/legate.db"},
		"a relative path":              {"state/legate.db", store.DefaultScheme, store.DefaultScheme + "://state/legate.db"},
		"a path with a colon in it":    {"./a:b.db", store.DefaultScheme, store.DefaultScheme + "://./a:b.db"},
		"a Windows path":               {`C:\state\legate.db`, store.DefaultScheme, store.DefaultScheme + `://C:\state\legate.db`},
		"the default scheme, explicit": {store.DefaultScheme + ":///x.db", store.DefaultScheme, store.DefaultScheme + ":///x.db"},
	} {
		t.Run(name, func(t *testing.T) {
			clear(opened)
			if _, err := store.Open(context.Background(), tc.url); err != nil {
				t.Fatal(err)
			}
			if opened[tc.scheme] != tc.got || len(opened) != 1 {
				t.Fatalf("opened %q, want %s given %q", opened, tc.scheme, tc.got)
			}
		})
	}
}

func TestOpenNamesTheKnownSchemes(t *testing.T) {
	for name, url := range map[string]string{
		"unknown scheme": "postgres://db.internal/legate",
		"no url":         "",
	} {
		t.Run(name, func(t *testing.T) {
			clear(opened)
			_, err := store.Open(context.Background(), url)
			if err == nil || !strings.Contains(err.Error(), "known: fake-a, fake-b, "+store.DefaultScheme) {
				t.Fatalf("error %v, want one listing the known schemes", err)
			}
			if len(opened) != 0 {
				t.Fatalf("opened %q", opened)
			}
		})
	}
}

package saas_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

func TestCursor(t *testing.T) {
	key := []byte("gateway-derived-key-for-acme")
	k := newKit("acme", saas.Options{})
	mint := newCall("list_things", "t1")
	mint.Key = keyFunc(key)
	c := k.Cursor(mint, "page-token-2")
	if c == "" || strings.Contains(c, "page-token") {
		t.Fatalf("cursor %q: want opaque", c)
	}
	if k.Cursor(mint, "") != "" {
		t.Error("the last page has a cursor")
	}
	back := newCall("list_things", "t1")
	back.Key = keyFunc(key)
	if tok, err := k.OpenCursor(back, c); err != nil || tok != "page-token-2" {
		t.Fatalf("open: %q, %v", tok, err)
	}
	if tok, err := k.OpenCursor(back, ""); err != nil || tok != "" {
		t.Fatalf("open empty: %q, %v", tok, err)
	}

	other := newKit("acme-2", saas.Options{}) // another instance, even with the same key
	tests := map[string]struct {
		k      *saas.Kit
		tenant string
		tool   string
		key    []byte
		cursor string
	}{
		"another tenant":   {k, "t2", "list_things", key, c},
		"no tenant":        {k, "", "list_things", key, c},
		"another tool":     {k, "t1", "list_others", key, c},
		"another instance": {other, "t1", "list_things", key, c},
		"another key":      {k, "t1", "list_things", []byte("other-key"), c},
		"altered token":    {k, "t1", "list_things", key, "cGFnZS10b2tlbi0z" + c[strings.Index(c, "."):]},
		"no signature":     {k, "t1", "list_things", key, strings.Split(c, ".")[0]},
		"garbage":          {k, "t1", "list_things", key, "%%%.???"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			call := newCall(tc.tool, tc.tenant)
			call.Key = keyFunc(tc.key)
			tok, err := tc.k.OpenCursor(call, tc.cursor)
			if le := wantCode(t, err, legate.CodeInvalidArgument); tok != "" || !strings.Contains(le.Message, "cursor") {
				t.Errorf("token %q, message %q", tok, le.Message)
			}
		})
	}
}

func TestCursorWithoutGatewayKey(t *testing.T) {
	// With no key from the gateway each kit signs with its own.
	a, b := newKit("acme", saas.Options{}), newKit("acme", saas.Options{})
	c := a.Cursor(newCall("list", "t1"), "p2")
	if tok, err := a.OpenCursor(newCall("list", "t1"), c); err != nil || tok != "p2" {
		t.Fatalf("same kit: %q %v", tok, err)
	}
	if _, err := b.OpenCursor(newCall("list", "t1"), c); err == nil {
		t.Fatal("another kit's cursor accepted")
	}
}

func TestRef(t *testing.T) {
	k := newKit("acme", saas.Options{})
	key := []byte("k")
	mint := newCall("list_channels", "t1")
	mint.Key = keyFunc(key)
	ref := k.Ref(mint, "channel", "C0123")
	if !strings.HasPrefix(ref, "channel://") || strings.Contains(ref, "C0123") {
		t.Fatalf("ref %q", ref)
	}
	// Any tool of the instance takes it back, for the same tenant.
	use := newCall("post_message", "t1")
	use.Key = keyFunc(key)
	if id, err := k.Resolve(use, "channel", ref); err != nil || id != "C0123" {
		t.Fatalf("resolve: %q %v", id, err)
	}
	for name, tc := range map[string]struct {
		k      *saas.Kit
		tenant string
		kind   string
		ref    string
	}{
		"another tenant":   {k, "t2", "channel", ref},
		"another instance": {newKit("acme-2", saas.Options{}), "t1", "channel", ref},
		"another kind":     {k, "t1", "message", strings.Replace(ref, "channel://", "message://", 1)},
		"a raw id":         {k, "t1", "channel", "C0123"},
		"empty":            {k, "t1", "channel", ""},
	} {
		t.Run(name, func(t *testing.T) {
			call := newCall("post_message", tc.tenant)
			call.Key = keyFunc(key)
			id, err := tc.k.Resolve(call, tc.kind, tc.ref)
			if wantCode(t, err, legate.CodeNotFound); id != "" {
				t.Errorf("resolved to %q", id)
			}
		})
	}

	obj := k.Object(mint, model.ChannelV1, "channel", "C0123")
	if obj.Contract != "channel.v1" || obj.Ref != ref || obj.Provider != "acme" || obj.Instance != "acme" || obj.ExternalID != "C0123" {
		t.Errorf("object %+v", obj)
	}
}

func TestOpen(t *testing.T) {
	k := newKit("acme", saas.Options{})
	call := newCall("list", "t1")
	c := k.Cursor(call, "p2")
	tests := map[string]struct {
		page      saas.Page
		size      int
		token     string
		wantError legate.Code
	}{
		"defaults":       {saas.Page{}, 100, "", ""},
		"asked":          {saas.Page{Limit: 7}, 7, "", ""},
		"capped":         {saas.Page{Limit: 5000}, 1000, "", ""},
		"cursor":         {saas.Page{Limit: 3, Cursor: c}, 3, "p2", ""},
		"negative":       {saas.Page{Limit: -1}, 0, "", legate.CodeInvalidArgument},
		"foreign cursor": {saas.Page{Cursor: "abc.def"}, 0, "", legate.CodeInvalidArgument},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := k.Open(call, tc.page, 100, 1000)
			if tc.wantError != "" {
				wantCode(t, err, tc.wantError)
				return
			}
			if err != nil || p.Size != tc.size || p.Token != tc.token {
				t.Errorf("paging %+v, %v; want size %d token %q", p, err, tc.size, tc.token)
			}
		})
	}
	l := saas.ListOf[int](k, call, nil, "")
	if l.Items == nil || l.NextCursor != "" {
		t.Errorf("last empty page %+v", l)
	}
	if l := saas.ListOf(k, call, []int{1}, "p3"); l.NextCursor == "" {
		t.Errorf("page with more: %+v", l)
	}
}

func keyFunc(k []byte) func() []byte { return func() []byte { return k } }

// A ref is what the package doc says it is, so that refs a client holds
// across an upgrade, or got from another replica, still resolve; and a
// kit that signed under one key signs under the next one as that key's.
func TestRefFormatIsStable(t *testing.T) {
	k := newKit("acme", saas.Options{})
	for _, key := range [][]byte{[]byte("key-one"), []byte("key-two"), []byte("key-one")} {
		call := newCall("get_thing", "t1")
		call.Key = keyFunc(key)
		h := hmac.New(sha256.New, key)
		for _, f := range []string{"ref", "t1", "acme", "page", "P-42"} {
			binary.Write(h, binary.BigEndian, uint64(len(f)))
			h.Write([]byte(f))
		}
		b64 := base64.RawURLEncoding
		want := "page://" + b64.EncodeToString([]byte("P-42")) + "." + b64.EncodeToString(h.Sum(nil)[:16])
		if got := k.Ref(call, "page", "P-42"); got != want {
			t.Fatalf("key %s: ref %q, want %q", key, got, want)
		}
	}
}

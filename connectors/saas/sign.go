package saas

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// A cursor or a ref is its value, base64url, a dot, and an HMAC-SHA256
// (first 16 bytes, base64url) over the purpose, the caller's tenant, the
// instance, the tool or object kind and the value, under the call's Key (the kit's own when the gateway gives none).
// The value is signed, not hidden: a provider's page token or object id is
// no secret, but only this tenant, instance and tool may hand it back.

const macBytes = 16

var b64 = base64.RawURLEncoding

// Cursor returns the opaque cursor a list tool returns as next_cursor for
// the provider's page token: "" for "" (the last page).
func (k *Kit) Cursor(call *connectors.Call, token string) string {
	if token == "" {
		return ""
	}
	return k.signed(call, "cursor", call.Tool, token)
}

// OpenCursor returns the provider's page token in cursor, "" for "". A
// cursor minted for another tenant, instance or tool, altered, or not a
// cursor at all is INVALID_ARGUMENT.
func (k *Kit) OpenCursor(call *connectors.Call, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	token, ok := k.open(call, "cursor", call.Tool, cursor)
	if !ok {
		return "", legate.Errorf(legate.CodeInvalidArgument, "%s: cursor: not a cursor of this tool; pass next_cursor as %s.%s returned it, with the same credentials", k.opts.Provider, k.instance, call.Tool)
	}
	return token, nil
}

// Ref returns the opaque reference to the provider object id of kind
// ("channel", "message"): "kind://" and the signed id. Only the same
// tenant, on the same instance, resolves it.
func (k *Kit) Ref(call *connectors.Call, kind, id string) string {
	return kind + "://" + k.signed(call, "ref", kind, id)
}

// signed is value, base64url, a dot, and its MAC, base64url.
func (k *Kit) signed(call *connectors.Call, purpose, scope, value string) string {
	mac := k.mac(call, purpose, scope, value)
	b := make([]byte, 0, b64.EncodedLen(len(value))+1+b64.EncodedLen(len(mac)))
	b = b64.AppendEncode(b, []byte(value))
	b = b64.AppendEncode(append(b, '.'), mac)
	return string(b)
}

// Resolve returns the provider id a ref of kind stands for. A ref of
// another kind, tenant or instance, or altered, resolves to nothing:
// NOT_FOUND, as an object the caller cannot see.
func (k *Kit) Resolve(call *connectors.Call, kind, ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, kind+"://")
	if ok {
		if id, ok := k.open(call, "ref", kind, rest); ok {
			return id, nil
		}
	}
	return "", legate.Errorf(legate.CodeNotFound, "%s: no %s %q here; pass a %s ref this connector returned", k.opts.Provider, kind, ref, kind)
}

func (k *Kit) open(call *connectors.Call, purpose, scope, signed string) (string, bool) {
	v, m, ok := strings.Cut(signed, ".")
	if !ok {
		return "", false
	}
	value, err1 := b64.DecodeString(v)
	mac, err2 := b64.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, k.mac(call, purpose, scope, string(value))) {
		return "", false
	}
	return string(value), true
}

func (k *Kit) mac(call *connectors.Call, purpose, scope, value string) []byte {
	var key []byte
	if call.Key != nil {
		key = call.Key()
	}
	if len(key) == 0 {
		key = k.ownKey
	}
	m, _ := k.macs.Get().(*keyedMAC)
	if m == nil || !bytes.Equal(m.key, key) {
		m = &keyedMAC{key: bytes.Clone(key), h: hmac.New(sha256.New, key)}
	} else {
		m.h.Reset()
	}
	defer k.macs.Put(m)
	buf := make([]byte, 0, 5*8+len(purpose)+len(call.Caller.Tenant)+len(k.instance)+len(scope)+len(value))
	for _, f := range []string{purpose, call.Caller.Tenant, k.instance, scope, value} {
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	m.h.Write(buf)
	var sum [sha256.Size]byte
	return m.h.Sum(sum[:0])[:macBytes]
}

// keyedMAC is an HMAC-SHA256 of key, kept for the next signature under
// the same key: making one hashes the key's two pads, half the work of
// signing a short value.
type keyedMAC struct {
	key []byte
	h   hash.Hash
}

// Object returns the header of a model of contract (model.MessageV1) for
// the provider object id of kind, its ref signed for call.
func (k *Kit) Object(call *connectors.Call, contract, kind, id string) model.Object {
	return model.Object{Contract: contract, Ref: k.Ref(call, kind, id), Provider: k.opts.Provider, Instance: k.instance, ExternalID: id}
}

package sqlbase

// Signed, opaque page cursors. This is a small local helper, to move to a
// shared connectors package once one offers signed cursors to every
// connector: nothing here is specific to SQL.

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
)

// Signer makes and opens cursors of one connector instance: an opaque
// token holding a JSON state, HMAC-SHA256-signed with a key drawn at
// random when the instance is built, and bound to the instance and the
// tool. A cursor from another instance, another tool, an earlier process
// or an edited token is refused: a client can hand back only what it was
// given.
type Signer struct {
	key      []byte
	instance string
}

// NewSigner returns a Signer for instance with a fresh random key.
func NewSigner(instance string) *Signer {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand panics rather)
	return &Signer{key: key, instance: instance}
}

// ErrCursor is returned by Open for a cursor that is malformed, forged, or
// made by another instance, tool or process: the caller asks again
// without it.
var ErrCursor = errors.New("invalid or expired cursor: run the query again without a cursor")

// Seal returns the cursor of state (any JSON value) for tool.
func (s *Signer) Seal(tool string, state any) (string, error) {
	body, err := json.Marshal(state)
	if err != nil {
		return "", err
	}
	mac := s.mac(tool, body)
	return base64.RawURLEncoding.EncodeToString(append(mac, body...)), nil
}

// Open checks cursor for tool and decodes its state into v.
func (s *Signer) Open(tool, cursor string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < sha256.Size {
		return ErrCursor
	}
	mac, body := raw[:sha256.Size], raw[sha256.Size:]
	if !hmac.Equal(mac, s.mac(tool, body)) {
		return ErrCursor
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return ErrCursor
	}
	return nil
}

// mac signs the instance, the tool and the body, each length-prefixed so
// that no two triples sign alike.
func (s *Signer) mac(tool string, body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	for _, part := range [][]byte{[]byte(s.instance), []byte(tool), body} {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(part)>>24), byte(len(part)>>16), byte(len(part)>>8), byte(len(part))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}

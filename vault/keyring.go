package vault

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// KeySize is the size of a key-encryption key and of a data key: 256 bits.
const KeySize = 32

// keyIDPattern is what a key id may look like.
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Key is one key-encryption key. Its material never prints: String,
// GoString and the fmt verbs show the id only.
type Key struct {
	ID  string
	key []byte
}

// String returns the key's id.
func (k Key) String() string { return k.ID }

// GoString returns the key's id, so %#v shows no material either.
func (k Key) GoString() string { return "vault.Key{ID: " + fmt.Sprintf("%q", k.ID) + "}" }

// KeyRing is an ordered set of key-encryption keys: the first is the primary
// and wraps every new data key; the others only unwrap (they are being
// retired by a rotation). A ring is never changed in place.
type KeyRing struct {
	keys []Key
}

// ParseKeyRing reads a ring in its text form: entries separated by commas
// or newlines, each ID:BASE64 (a 32-byte key, standard or URL base64,
// padded or not) or a bare BASE64 key, whose id is then "fp-" and the first
// 8 hex digits of a SHA-256 over the key. Blank lines and lines starting
// with # are skipped; the first entry is the primary. Errors name entries
// by position and id, never by their material.
func ParseKeyRing(text string) (*KeyRing, error) {
	r := &KeyRing{}
	n := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, entry := range strings.Split(line, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			n++
			k, err := parseKey(entry)
			if err != nil {
				return nil, fmt.Errorf("key ring entry %d: %w", n, err)
			}
			if r.Key(k.ID) != nil {
				return nil, fmt.Errorf("key ring entry %d: duplicate key id %q", n, k.ID)
			}
			r.keys = append(r.keys, k)
		}
	}
	if len(r.keys) == 0 {
		return nil, errors.New("key ring holds no key")
	}
	return r, nil
}

func parseKey(entry string) (Key, error) {
	id, b64, hasID := strings.Cut(entry, ":")
	if !hasID {
		b64 = entry
	}
	material, err := decodeKey(b64)
	if err != nil {
		if hasID {
			return Key{}, fmt.Errorf("key %q: %w", id, err)
		}
		return Key{}, err
	}
	if !hasID {
		id = fingerprint(material)
	}
	if !keyIDPattern.MatchString(id) {
		return Key{}, fmt.Errorf("key id %q must match %s", id, keyIDPattern)
	}
	return Key{ID: id, key: material}, nil
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("key is %d bytes, want %d (base64 of 32 random bytes: openssl rand -base64 32)", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, errors.New("key is not base64 (want base64 of 32 random bytes: openssl rand -base64 32)")
}

// fingerprint is the id of a key given without one. A hash of a random
// 256-bit key reveals nothing of it.
func fingerprint(material []byte) string {
	h := sha256.New()
	h.Write([]byte("legate vault key id\x00"))
	h.Write(material)
	return "fp-" + hex.EncodeToString(h.Sum(nil)[:4])
}

// NewKey makes a random key with an id telling when it was made:
// k20261130-1a2b3c.
func NewKey() (Key, error) {
	material := make([]byte, KeySize)
	if _, err := rand.Read(material); err != nil {
		return Key{}, err
	}
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		return Key{}, err
	}
	return Key{ID: "k" + time.Now().UTC().Format("20060102") + "-" + hex.EncodeToString(suffix), key: material}, nil
}

// NewKeyRing returns a ring of keys, the first the primary.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("key ring holds no key")
	}
	r := &KeyRing{}
	for _, k := range keys {
		if len(k.key) != KeySize {
			return nil, fmt.Errorf("key %q has no material", k.ID)
		}
		if r.Key(k.ID) != nil {
			return nil, fmt.Errorf("duplicate key id %q", k.ID)
		}
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// Primary returns the key that wraps new data keys.
func (r *KeyRing) Primary() Key { return r.keys[0] }

// Key returns the key with the id, or nil.
func (r *KeyRing) Key(id string) *Key {
	for i := range r.keys {
		if r.keys[i].ID == id {
			return &r.keys[i]
		}
	}
	return nil
}

// IDs returns the key ids, primary first.
func (r *KeyRing) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID
	}
	return ids
}

// Keys returns the keys, primary first.
func (r *KeyRing) Keys() []Key { return slices.Clone(r.keys) }

// String lists the key ids; it never shows key material.
func (r *KeyRing) String() string { return strings.Join(r.IDs(), ",") }

// GoString is String, so %#v shows no material either.
func (r *KeyRing) GoString() string { return "vault.KeyRing{" + r.String() + "}" }

// EnvValue returns the ring in the one-line form LEGATE_MASTER_KEY takes:
// ID:BASE64 entries joined by commas, primary first. It holds key material.
func (r *KeyRing) EnvValue() string {
	parts := make([]string, len(r.keys))
	for i, k := range r.keys {
		parts[i] = k.ID + ":" + base64.StdEncoding.EncodeToString(k.key)
	}
	return strings.Join(parts, ",")
}

// fileText is the ring as a key file holds it: a comment, then one
// ID:BASE64 line per key, primary first.
func (r *KeyRing) fileText() []byte {
	var b strings.Builder
	b.WriteString("# Legate vault key ring: one ID:BASE64 key (32 bytes) per line.\n")
	b.WriteString("# The first line is the primary; the others only decrypt, and\n")
	b.WriteString("# `legate vault rotate` drops them once no secret uses them.\n")
	for _, k := range r.keys {
		b.WriteString(k.ID + ":" + base64.StdEncoding.EncodeToString(k.key) + "\n")
	}
	return []byte(b.String())
}

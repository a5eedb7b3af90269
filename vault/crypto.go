package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"strconv"

	"github.com/legate-mcp/legate/store"
)

// The purposes the additional data of each ciphertext starts with, so a
// wrapped key can never pass for a value or the other way round.
const (
	purposeData = "legate vault value v1"
	purposeKey  = "legate vault data key v1"
)

// additionalData binds a ciphertext to where it belongs: the purpose, then
// each field with its length, so no two field lists encode alike.
func additionalData(purpose string, fields ...string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(purpose)))
	b = append(b, purpose...)
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// dataAD binds a value's ciphertext to its tenant, name and version.
func dataAD(s store.Secret) []byte {
	return additionalData(purposeData, s.Tenant, s.Name, strconv.Itoa(s.Version))
}

// keyAD binds a wrapped data key to the key that wrapped it and to its
// tenant, name and version.
func keyAD(keyID string, s store.Secret) []byte {
	return additionalData(purposeKey, keyID, s.Tenant, s.Name, strconv.Itoa(s.Version))
}

// seal encrypts with AES-256-GCM under a random 96-bit nonce, which leads
// the result.
func seal(key, plaintext, ad []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	return aead.Seal(nil, nil, plaintext, ad), nil
}

// unseal reverses seal; any change to the ciphertext, the key or the
// additional data fails.
func unseal(key, ciphertext, ad []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	return aead.Open(nil, nil, ciphertext, ad)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(block)
}

// newDataKey returns a random 256-bit data key.
func newDataKey() ([]byte, error) {
	k := make([]byte, KeySize)
	_, err := rand.Read(k)
	return k, err
}

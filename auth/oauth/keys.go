package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// SigningKeyName is the name of the signing key among the vault's system
// secrets (vault.SystemPrefix + SigningKeyName).
const SigningKeyName = "oauth-signing-key"

// loadKey reads the signing key, making one on first start. With a vault
// it is sealed there; without, it is kept in the store unsealed.
func loadKey(ctx context.Context, st store.OAuthStore, v *vault.Vault, log *slog.Logger) (*signingKey, error) {
	if v == nil {
		der, err := plainKey(ctx, st)
		if err != nil {
			return nil, err
		}
		return parseKey(der)
	}
	der, err := sealedKey(ctx, st, v, log)
	if err != nil {
		return nil, err
	}
	return parseKey(der)
}

// plainKey reads the key kept in the store unsealed, making and storing
// one when there is none; replicas racing to make one all end with the
// stored one.
func plainKey(ctx context.Context, st store.OAuthStore) ([]byte, error) {
	der, err := st.SigningKey(ctx)
	if errors.Is(err, store.ErrNotFound) {
		if der, err = newKey(); err != nil {
			return nil, err
		}
		if err = st.PutSigningKey(ctx, der); errors.Is(err, store.ErrExists) {
			der, err = st.SigningKey(ctx)
		}
	}
	return der, err
}

// sealedKey reads the key sealed in the vault: always its first version,
// so replicas racing to make one all use the same. A key an earlier
// Legate kept in the store unsealed is sealed into the vault, then removed
// from the store; with neither, a new key is sealed.
func sealedKey(ctx context.Context, st store.OAuthStore, v *vault.Vault, log *slog.Logger) ([]byte, error) {
	der, _, err := v.GetSystem(ctx, SigningKeyName, 1)
	if !errors.Is(err, vault.ErrNotFound) {
		return der, err
	}
	plain, err := st.SigningKey(ctx)
	unsealed := err == nil
	if errors.Is(err, store.ErrNotFound) {
		plain, err = newKey()
	}
	if err != nil {
		return nil, err
	}
	if _, err := v.SetSystem(ctx, SigningKeyName, plain); err != nil {
		return nil, fmt.Errorf("sealing it in the vault: %w", err)
	}
	if der, _, err = v.GetSystem(ctx, SigningKeyName, 1); err != nil {
		return nil, err
	}
	if unsealed {
		if err := st.DeleteSigningKey(ctx); err != nil {
			return nil, err
		}
		log.Info("sealed the OAuth signing key in the vault and removed its unsealed copy from the store")
	}
	return der, nil
}

func newKey() ([]byte, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return x509.MarshalPKCS8PrivateKey(k)
}

// parseKey reads a PKCS #8 RSA key; its id is a hash of its public key.
func parseKey(der []byte) (*signingKey, error) {
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("the stored signing key: %w", err)
	}
	rk, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the stored signing key is not an RSA key")
	}
	pub, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	return &signingKey{id: hashSecret(string(pub))[:16], key: rk}, nil
}

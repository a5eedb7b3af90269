package oauth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// publishedKey starts the authorization server over st and v and returns
// the modulus of the key its JWKS publishes.
func publishedKey(t *testing.T, st store.Store, v *vault.Vault) []byte {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	as, err := oauth.New(context.Background(), config.Auth{Resource: resource, OAuthServer: &config.OAuthServer{}}, oauth.Options{Store: st, Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = as.Handler()
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL + oauth.KeysPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct {
			N string `json:"n"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("the JWKS: %+v %v", set, err)
	}
	n, err := base64.RawURLEncoding.DecodeString(set.Keys[0].N)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sealedStore(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, filepath.Join(t.TempDir(), "vault.key")
}

func openVault(st store.Store, keyFile string) *vault.Vault {
	return vault.New(st.Secrets(), vault.KeySource{File: keyFile, Create: true}, nil)
}

// With a vault, the signing key is made sealed in it, never written to
// the store in the clear, and is the same at the next start and after the
// vault's keys are rotated (the old key retired).
func TestSigningKeySealedInTheVault(t *testing.T) {
	ctx := context.Background()
	st, keyFile := sealedStore(t)
	first := publishedKey(t, st, openVault(st, keyFile))
	if _, err := st.OAuth().SigningKey(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the store holds a signing key in the clear: %v", err)
	}
	der, info, err := openVault(st, keyFile).GetSystem(ctx, oauth.SigningKeyName, 1)
	if err != nil || info.KeyID == "" {
		t.Fatalf("the sealed key: %+v %v", info, err)
	}
	row, err := st.Secrets().Get(ctx, "", vault.SystemPrefix+oauth.SigningKeyName, 1)
	if err != nil || bytes.Contains(row.Ciphertext, der[len(der)-64:]) {
		t.Fatalf("the vault's row holds the key in the clear (%v)", err)
	}
	if again := publishedKey(t, st, openVault(st, keyFile)); !bytes.Equal(again, first) {
		t.Fatal("the next start signs with another key")
	}
	rep, err := openVault(st, keyFile).Rotate(ctx, nil)
	if err != nil || len(rep.Retired) != 1 || rep.Remaining != 0 {
		t.Fatalf("rotating the vault's keys: %+v %v", rep, err)
	}
	if after := publishedKey(t, st, openVault(st, keyFile)); !bytes.Equal(after, first) {
		t.Fatal("after a rotation of the vault's keys, another signing key")
	}
}

// A signing key an earlier Legate kept in the store in the clear is
// sealed into the vault at the first start with one, and removed from the
// store: the same key goes on signing, so tokens issued before stay good.
func TestSigningKeyInTheClearIsSealed(t *testing.T) {
	ctx := context.Background()
	st, keyFile := sealedStore(t)
	old, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(old)
	if err := st.OAuth().PutSigningKey(ctx, der); err != nil {
		t.Fatal(err)
	}
	if n := publishedKey(t, st, nil); !bytes.Equal(n, old.N.Bytes()) {
		t.Fatal("without a vault, the key in the store does not sign")
	}
	if n := publishedKey(t, st, openVault(st, keyFile)); !bytes.Equal(n, old.N.Bytes()) {
		t.Fatal("after sealing, another key signs")
	}
	if _, err := st.OAuth().SigningKey(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the key is still in the store in the clear: %v", err)
	}
	if sealed, _, err := openVault(st, keyFile).GetSystem(ctx, oauth.SigningKeyName, 1); err != nil || !bytes.Equal(sealed, der) {
		t.Fatalf("the sealed key is not the one from the store: %v", err)
	}
	if n := publishedKey(t, st, openVault(st, keyFile)); !bytes.Equal(n, old.N.Bytes()) {
		t.Fatal("the next start signs with another key")
	}
}

// No credential reference can name the sealed key, and `legate vault`
// can neither replace nor remove it: its name is outside what they take.
func TestSigningKeyIsNoCredential(t *testing.T) {
	if _, err := vault.ParseRef("vault:" + vault.SystemPrefix + oauth.SigningKeyName); err == nil {
		t.Fatal("a reference names the signing key")
	}
	st, keyFile := sealedStore(t)
	if _, err := openVault(st, keyFile).Set(context.Background(), "", vault.SystemPrefix+oauth.SigningKeyName, []byte("x")); err == nil {
		t.Fatal("vault set replaces the signing key")
	}
	publishedKey(t, st, openVault(st, keyFile))
	if _, err := openVault(st, keyFile).Delete(context.Background(), "", vault.SystemPrefix+oauth.SigningKeyName); err == nil || !strings.Contains(err.Error(), "Legate's own secrets") {
		t.Fatalf("vault rm of the signing key: %v, want it refused as Legate's own secret", err)
	}
}

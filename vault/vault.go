package vault

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/legate-mcp/legate/store"
)

// MaxValueSize bounds one secret value.
const MaxValueSize = 64 << 10

// NamePattern returns what a secret name may look like, compiled at its
// first use: its counted repetition compiles to 60 KB that a gateway
// without credentials never needs.
var NamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_./-]{0,127}$`)
})

// Errors of the vault, matched with errors.Is.
var (
	// ErrDecrypt: a stored version does not decrypt — its row was altered or
	// moved, or the key under its id is not the one that wrapped it. The
	// caller reports it by reference; setting the secret again replaces it.
	ErrDecrypt = errors.New("cannot be decrypted: the stored row was altered or moved, or its key is not the one that wrapped it")
	// ErrUnknownKey: a stored version is wrapped by a key the ring does not
	// hold. The operator adds that key back to the ring as an older key.
	ErrUnknownKey = errors.New("unknown key")
)

// Options configure a Vault.
type Options struct {
	// Logger receives the vault's warnings (a key file created beside the
	// data); nil discards them.
	Logger *slog.Logger
}

// Vault seals and opens secrets in a store.SecretStore with the key ring of
// a KeySource. It is safe for concurrent use.
type Vault struct {
	st  store.SecretStore
	src KeySource
	log *slog.Logger

	mu     sync.Mutex
	ring   *KeyRing
	warned bool
}

// New returns a vault on st whose keys come from src. It reads no key until
// one is needed (or LoadKeys is called).
func New(st store.SecretStore, src KeySource, opts *Options) *Vault {
	v := &Vault{st: st, src: src, log: slog.New(slog.DiscardHandler)}
	if opts != nil && opts.Logger != nil {
		v.log = opts.Logger
	}
	return v
}

// Source returns where the vault's keys come from.
func (v *Vault) Source() KeySource { return v.src }

// LoadKeys reads the key ring now, creating the default key file when
// there is none, so a server reports a bad key at start rather than at the
// first call.
func (v *Vault) LoadKeys() error {
	_, err := v.reload()
	return err
}

// Keys returns the key ring, read at first use.
func (v *Vault) Keys() (*KeyRing, error) {
	v.mu.Lock()
	r := v.ring
	v.mu.Unlock()
	if r != nil {
		return r, nil
	}
	return v.reload()
}

// reload reads the ring from its source again: a rotation in another
// process may have added a key.
func (v *Vault) reload() (*KeyRing, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, created, err := v.src.load()
	if err != nil {
		return nil, err
	}
	if created {
		v.log.Warn("vault: created a key file beside the data it encrypts; keep a copy of it elsewhere, or set "+EnvMasterKey+" or "+EnvKeyFile,
			"key_file", v.src.File, "key_id", r.Primary().ID)
	}
	if !v.warned && v.src.File != "" {
		v.warned = true
		if fi, err := os.Stat(v.src.File); err == nil && fi.Mode().Perm()&0o077 != 0 {
			v.log.Warn("vault: the key file is readable by others; chmod 600 it", "key_file", v.src.File, "mode", fi.Mode().Perm().String())
		}
	}
	v.ring = r
	return r, nil
}

// key returns the key with id, reading the ring again when it lacks it;
// nil when the ring does not hold it.
func (v *Vault) key(id string) (*Key, error) {
	r, err := v.Keys()
	if err != nil {
		return nil, err
	}
	if k := r.Key(id); k != nil {
		return k, nil
	}
	if r, err = v.reload(); err != nil {
		return nil, err
	}
	return r.Key(id), nil
}

// Info describes one stored version of a secret, never its value.
type Info struct {
	Tenant    string    `json:"tenant"` // "" when shared by every tenant
	Name      string    `json:"name"`
	Version   int       `json:"version"`
	KeyID     string    `json:"key_id"`
	CreatedAt time.Time `json:"created_at"`
}

func infoOf(s store.Secret) Info {
	return Info{Tenant: s.Tenant, Name: s.Name, Version: s.Version, KeyID: s.KeyID, CreatedAt: s.CreatedAt}
}

// Describe names a secret for messages: `vault:NAME (tenant "T")` or
// `vault:NAME (shared)`.
func Describe(tenant, name string) string {
	if tenant == "" {
		return "vault:" + name + " (shared)"
	}
	return fmt.Sprintf("vault:%s (tenant %q)", name, tenant)
}

// ValidateName checks a secret name and a tenant.
func ValidateName(tenant, name string) error {
	if strings.HasPrefix(name, SystemPrefix) {
		return fmt.Errorf("secret name %q: names starting with %q are Legate's own secrets (such as the OAuth signing key), which no command sets or removes", name, SystemPrefix)
	}
	if !NamePattern().MatchString(name) {
		return fmt.Errorf("secret name %q must match %s", name, NamePattern())
	}
	if len(tenant) > 128 || strings.IndexFunc(tenant, unicode.IsControl) >= 0 {
		return fmt.Errorf("tenant %q: at most 128 characters, no control characters", tenant)
	}
	return nil
}

// Set stores value as the next version of the secret, under a new data key
// wrapped by the primary key.
func (v *Vault) Set(ctx context.Context, tenant, name string, value []byte) (Info, error) {
	if err := ValidateName(tenant, name); err != nil {
		return Info{}, err
	}
	return v.set(ctx, tenant, name, value)
}

// Replace stores value as the secret's only version: Set, then the older
// versions are removed. For values whose history is worth nothing and that
// change with use, such as a connection's tokens, refreshed every hour.
func (v *Vault) Replace(ctx context.Context, tenant, name string, value []byte) (Info, error) {
	info, err := v.Set(ctx, tenant, name, value)
	if err != nil {
		return info, err
	}
	if _, err := v.st.DeleteBefore(ctx, tenant, name, info.Version); err != nil {
		return info, fmt.Errorf("%s: the new version is stored, the older ones could not be removed: %w", Describe(tenant, name), err)
	}
	return info, nil
}

// set is Set of a name already checked.
func (v *Vault) set(ctx context.Context, tenant, name string, value []byte) (Info, error) {
	switch {
	case len(value) == 0:
		return Info{}, fmt.Errorf("%s: the value is empty", Describe(tenant, name))
	case len(value) > MaxValueSize:
		return Info{}, fmt.Errorf("%s: the value is %d bytes, at most %d", Describe(tenant, name), len(value), MaxValueSize)
	}
	// Read the ring again, so a rotation another process began is joined:
	// the new version is wrapped by the newest primary.
	ring, err := v.reload()
	if err != nil {
		return Info{}, err
	}
	kek := ring.Primary()
	for attempt := 0; ; attempt++ {
		latest, err := v.st.Get(ctx, tenant, name, 0)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Info{}, err
		}
		row, err := sealRow(kek, store.Secret{Tenant: tenant, Name: name, Version: latest.Version + 1, CreatedAt: time.Now().UTC()}, value)
		if err != nil {
			return Info{}, fmt.Errorf("%s: sealing: %w", Describe(tenant, name), err)
		}
		err = v.st.Create(ctx, row)
		if errors.Is(err, store.ErrExists) && attempt < 5 {
			continue // another writer took that version number
		}
		if err != nil {
			return Info{}, err
		}
		return infoOf(row), nil
	}
}

// sealRow encrypts value under a new data key and wraps that key with kek.
func sealRow(kek Key, row store.Secret, value []byte) (store.Secret, error) {
	dek, err := newDataKey()
	if err != nil {
		return row, err
	}
	defer clear(dek)
	if row.Ciphertext, err = seal(dek, value, dataAD(row)); err != nil {
		return row, err
	}
	row.KeyID = kek.ID
	row.WrappedKey, err = seal(kek.key, dek, keyAD(kek.ID, row))
	return row, err
}

// unwrap returns the data key of a stored version.
func (v *Vault) unwrap(row store.Secret) ([]byte, error) {
	k, err := v.key(row.KeyID)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, fmt.Errorf("%s version %d is wrapped by key %q, which %s does not hold (add it back after the primary): %w",
			Describe(row.Tenant, row.Name), row.Version, row.KeyID, v.src, ErrUnknownKey)
	}
	dek, err := unseal(k.key, row.WrappedKey, keyAD(row.KeyID, row))
	if err != nil || len(dek) != KeySize {
		return nil, fmt.Errorf("%s version %d: data key %w", Describe(row.Tenant, row.Name), row.Version, ErrDecrypt)
	}
	return dek, nil
}

// open decrypts a stored version.
func (v *Vault) open(row store.Secret) ([]byte, error) {
	dek, err := v.unwrap(row)
	if err != nil {
		return nil, err
	}
	defer clear(dek)
	value, err := unseal(dek, row.Ciphertext, dataAD(row))
	if err != nil {
		return nil, fmt.Errorf("%s version %d: value %w", Describe(row.Tenant, row.Name), row.Version, ErrDecrypt)
	}
	return value, nil
}

// Get returns the newest version of the secret of exactly this tenant (""
// for the shared one). A missing secret is an error wrapping ErrNotFound.
func (v *Vault) Get(ctx context.Context, tenant, name string) ([]byte, Info, error) {
	return v.GetVersion(ctx, tenant, name, 0)
}

// GetVersion returns one version of the secret of exactly this tenant, the
// newest when version is 0.
func (v *Vault) GetVersion(ctx context.Context, tenant, name string, version int) ([]byte, Info, error) {
	row, err := v.st.Get(ctx, tenant, name, version)
	if errors.Is(err, store.ErrNotFound) {
		if version != 0 {
			return nil, Info{}, fmt.Errorf("%s version %d does not exist: %w", Describe(tenant, name), version, ErrNotFound)
		}
		return nil, Info{}, fmt.Errorf("%s is not set: %w", Describe(tenant, name), ErrNotFound)
	}
	if err != nil {
		return nil, Info{}, err
	}
	value, err := v.open(row)
	if err != nil {
		return nil, Info{}, err
	}
	return value, infoOf(row), nil
}

// Resolve returns the value a call of tenant gets for the secret name: the
// tenant's own secret when it has one, else the shared one. Errors name the
// reference and the tenant, never a value.
func (v *Vault) Resolve(ctx context.Context, tenant, name string) (string, error) {
	value, _, err := v.Get(ctx, tenant, name)
	if tenant != "" && errors.Is(err, ErrNotFound) {
		value, _, err = v.Get(ctx, "", name)
		if errors.Is(err, ErrNotFound) {
			return "", fmt.Errorf("vault:%s is set neither for tenant %q nor shared (legate vault set %s [--tenant %s]): %w", name, tenant, name, tenant, ErrNotFound)
		}
	}
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("vault:%s is not set (legate vault set %s): %w", name, name, ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	return string(value), nil
}

// List describes every stored version, by tenant, name and version.
func (v *Vault) List(ctx context.Context) ([]Info, error) {
	rows, err := v.st.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(rows))
	for i, r := range rows {
		out[i] = infoOf(r)
	}
	return out, nil
}

// Delete removes every version of the secret of exactly this tenant and
// says how many there were; a missing secret is an error wrapping
// ErrNotFound.
func (v *Vault) Delete(ctx context.Context, tenant, name string) (int, error) {
	if err := ValidateName(tenant, name); err != nil {
		return 0, err
	}
	n, err := v.st.Delete(ctx, tenant, name)
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%s is not set: %w", Describe(tenant, name), ErrNotFound)
	}
	return n, err
}

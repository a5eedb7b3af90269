package store

import (
	"context"
	"time"
)

// Secret is one version of one vault secret as stored: the value encrypted
// under its own data key, that key wrapped by a key-encryption key. The
// store never sees a value; package vault seals and opens these.
type Secret struct {
	Tenant  string // "" for a secret shared by every tenant
	Name    string
	Version int
	// KeyID names the key-encryption key that wrapped WrappedKey.
	KeyID      string
	WrappedKey []byte
	Ciphertext []byte
	CreatedAt  time.Time
}

// SecretRewrap replaces the wrapped data key of one stored version.
type SecretRewrap struct {
	// Old is the version as read: the change applies only if the row still
	// holds Old.KeyID and Old.WrappedKey.
	Old        Secret
	KeyID      string
	WrappedKey []byte
}

// SecretStore keeps vault secrets, every version of each, keyed by tenant,
// name and version.
type SecretStore interface {
	// Create stores one version; an existing tenant, name and version is an
	// error wrapping ErrExists (the caller numbers it again and retries).
	Create(ctx context.Context, s Secret) error
	// Get returns one version of a secret, the newest when version is 0,
	// or an error wrapping ErrNotFound.
	Get(ctx context.Context, tenant, name string, version int) (Secret, error)
	// List returns every version without its wrapped key and ciphertext,
	// sorted by tenant, name and version.
	List(ctx context.Context) ([]Secret, error)
	// Delete removes every version of a secret and says how many there
	// were; none is an error wrapping ErrNotFound.
	Delete(ctx context.Context, tenant, name string) (int, error)
	// DeleteBefore removes the versions of a secret older than version and
	// says how many there were (none is no error).
	DeleteBefore(ctx context.Context, tenant, name string, version int) (int, error)
	// KeyUsage counts the stored versions wrapped by each key id.
	KeyUsage(ctx context.Context) (map[string]int, error)
	// NotWrappedBy returns up to limit versions whose data key is not
	// wrapped by keyID, with their wrapped keys but no ciphertext, sorted by
	// tenant, name and version.
	NotWrappedBy(ctx context.Context, keyID string, limit int) ([]Secret, error)
	// Rewrap applies the changes in one transaction, each only if its row
	// is still as read, and says how many rows changed.
	Rewrap(ctx context.Context, changes []SecretRewrap) (int, error)
}

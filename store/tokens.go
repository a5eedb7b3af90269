package store

import (
	"context"
	"time"
)

// Token is a static bearer token as stored: its SHA-256 hash and the
// principal it authenticates, never the token itself.
type Token struct {
	// Name is the principal's name, unique among tokens.
	Name    string
	Tenant  string
	Role    string
	Profile string
	// Hash is the hex SHA-256 of the token.
	Hash      string
	CreatedAt time.Time
	// RevokedAt is when the token was revoked, zero while it is valid.
	RevokedAt time.Time
}

// TokenStore keeps static tokens by name and by hash. A revoked token stays,
// keeping its name taken, so an audit row's principal names one token.
type TokenStore interface {
	// Create stores a token, a zero CreatedAt meaning now; a name or hash in
	// use is an error wrapping ErrExists.
	Create(ctx context.Context, t Token) error
	// ByHash returns the token, revoked or not, with the hash, or an error
	// wrapping ErrNotFound.
	ByHash(ctx context.Context, hash string) (Token, error)
	// List returns every token without its hash, sorted by name.
	List(ctx context.Context) ([]Token, error)
	// Revoke marks a token revoked at the given time: an unknown name is an
	// error wrapping ErrNotFound, a revoked one wrapping ErrConflict.
	Revoke(ctx context.Context, name string, at time.Time) error
}

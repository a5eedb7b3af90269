package store

import (
	"context"
	"time"
)

// User is a local account that logs in to Legate's authorization server.
type User struct {
	// Name is the principal's name, unique among users.
	Name    string
	Tenant  string
	Role    string
	Profile string
	// PasswordHash is the encoded argon2id hash of the password.
	PasswordHash string
	Disabled     bool
	CreatedAt    time.Time
}

// UserStore keeps local accounts by name.
type UserStore interface {
	// Create stores a user, a zero CreatedAt meaning now; a name in use is
	// an error wrapping ErrExists.
	Create(ctx context.Context, u User) error
	// Get returns the user with the name, or an error wrapping ErrNotFound.
	Get(ctx context.Context, name string) (User, error)
	// List returns every user without its password hash, sorted by name.
	List(ctx context.Context) ([]User, error)
	// SetPassword replaces a user's password hash; an unknown name is an
	// error wrapping ErrNotFound.
	SetPassword(ctx context.Context, name, hash string) error
	// Update replaces a user's tenant, role, profile and password hash;
	// an unknown name is an error wrapping ErrNotFound.
	Update(ctx context.Context, u User) error
	// SetDisabled disables or enables a user; an unknown name is an error
	// wrapping ErrNotFound.
	SetDisabled(ctx context.Context, name string, disabled bool) error
}

// OAuthClient is a client registered with the authorization server
// (RFC 7591).
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
	// SecretHash is the hex SHA-256 of the client's secret; "" for a public
	// client.
	SecretHash string
	CreatedAt  time.Time
	// LastUsedAt is when a token was last issued to the client; zero until
	// then.
	LastUsedAt time.Time
}

// OAuthRequest is an authorization request in flight: made by the
// authorization endpoint, completed by login and consent, and exchanged
// once for tokens by its code.
type OAuthRequest struct {
	ID       string
	ClientID string
	// Data is the request as the authorization server keeps it.
	Data []byte
	// CodeHash is the hex SHA-256 of the code issued for it, "" before,
	// SpentCode once that code was exchanged: a request is given one code
	// in its life.
	CodeHash  string
	ExpiresAt time.Time
}

// SpentCode is the CodeHash of a request whose code was exchanged.
const SpentCode = "-"

// The kinds of OAuthToken.
const (
	OAuthAccess  = "access"
	OAuthRefresh = "refresh"
)

// OAuthToken is an access or refresh token the authorization server
// issued, never the token itself.
type OAuthToken struct {
	// ID is the access token's jti, or the refresh token's id.
	ID   string
	Kind string
	// Hash is the hex SHA-256 of a refresh token; "" for an access token.
	Hash string
	// Family is the id shared by every token descending from one
	// authorization: revoking it revokes them all.
	Family    string
	ClientID  string
	Principal string
	Scopes    []string
	Audience  []string
	AuthTime  time.Time
	CreatedAt time.Time
	ExpiresAt time.Time
	// RotatedAt is when a refresh token was exchanged for its successor.
	RotatedAt time.Time
	RevokedAt time.Time
}

// OAuthStore keeps the authorization server's clients, requests, tokens
// and signing key.
type OAuthStore interface {
	// CreateClient stores a client; an id in use wraps ErrExists.
	CreateClient(ctx context.Context, c OAuthClient) error
	// Client returns a client or an error wrapping ErrNotFound.
	Client(ctx context.Context, id string) (OAuthClient, error)
	// TouchClient sets a client's LastUsedAt.
	TouchClient(ctx context.Context, id string, at time.Time) error
	// CountClients counts the registered clients.
	CountClients(ctx context.Context) (int, error)
	// DeleteUnusedClients deletes the clients never used and created
	// before the time, returning how many.
	DeleteUnusedClients(ctx context.Context, createdBefore time.Time) (int, error)

	// PutRequest stores a request, replacing the client, data and expiry
	// of the one with its id; the code of a request already stored is
	// kept (IssueCode alone gives one).
	PutRequest(ctx context.Context, r OAuthRequest) error
	// IssueCode gives an unexpired request that never had a code the
	// code's hash, at once: of two callers, one succeeds and the other
	// gets an error wrapping ErrConflict, as does a request whose code was
	// issued or spent before; an unknown or expired request wraps
	// ErrNotFound.
	IssueCode(ctx context.Context, id, codeHash string, now time.Time) error
	// Request returns an unexpired request by id, or an error wrapping
	// ErrNotFound.
	Request(ctx context.Context, id string, now time.Time) (OAuthRequest, error)
	// RequestByCode returns an unexpired request by its code's hash and
	// takes the code off it (CodeHash becomes SpentCode), at once: of two
	// callers with one code, one gets the request and the other an error
	// wrapping ErrNotFound, as do an unknown or expired code.
	RequestByCode(ctx context.Context, codeHash string, now time.Time) (OAuthRequest, error)
	// DeleteRequest deletes a request; an unknown id is no error.
	DeleteRequest(ctx context.Context, id string) error

	// CreateToken stores a token; an id or hash in use wraps ErrExists.
	CreateToken(ctx context.Context, t OAuthToken) error
	// Token returns a token by id, or an error wrapping ErrNotFound.
	Token(ctx context.Context, id string) (OAuthToken, error)
	// TokenByHash returns a refresh token by hash, or an error wrapping
	// ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (OAuthToken, error)
	// Rotate marks refresh token id rotated at the time and stores next
	// tokens, at once: a token rotated or revoked already is an error
	// wrapping ErrConflict and nothing is stored.
	Rotate(ctx context.Context, id string, at time.Time, next ...OAuthToken) error
	// RevokeFamily revokes every token of a family not yet revoked and
	// returns how many it revoked.
	RevokeFamily(ctx context.Context, family string, at time.Time) (int, error)
	// RefreshTokens lists the refresh tokens neither rotated nor revoked
	// nor expired at now, without hashes, newest first.
	RefreshTokens(ctx context.Context, now time.Time) ([]OAuthToken, error)

	// DeleteExpired deletes the requests and tokens expired before the
	// time, returning how many rows it deleted.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)

	// SigningKey returns the signing key (PKCS #8 DER), or an error
	// wrapping ErrNotFound before one is put.
	SigningKey(ctx context.Context) ([]byte, error)
	// PutSigningKey stores the signing key once: when one is stored
	// already, an error wrapping ErrExists (read it with SigningKey).
	PutSigningKey(ctx context.Context, key []byte) error
	// DeleteSigningKey removes the stored signing key, once it is kept
	// elsewhere (sealed in the vault); none stored is no error.
	DeleteSigningKey(ctx context.Context) error
}

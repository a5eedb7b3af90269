package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

// oauthStore keeps the authorization server's clients, requests, tokens
// and signing key; tokens only by id and hash.
type oauthStore struct{ db database }

func (s oauthStore) CreateClient(ctx context.Context, c store.OAuthClient) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, secret_hash, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, strings.Join(c.RedirectURIs, "\n"), c.SecretHash, c.CreatedAt.Unix(), unixOrNil(c.LastUsedAt))
	if s.db.duplicate(err) {
		return fmt.Errorf("client %q: %w", c.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing client %q: %w", c.ID, err)
	}
	return nil
}

func (s oauthStore) Client(ctx context.Context, id string) (store.OAuthClient, error) {
	c := store.OAuthClient{ID: id}
	var uris string
	var created, used int64
	err := s.db.QueryRowContext(ctx, `SELECT name, redirect_uris, secret_hash, created_at, last_used_at FROM oauth_clients WHERE id = ?`, id).
		Scan(&c.Name, &uris, &c.SecretHash, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return store.OAuthClient{}, fmt.Errorf("client %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("reading client %q: %w", id, err)
	}
	c.RedirectURIs = splitNonEmpty(uris, "\n")
	c.CreatedAt, c.LastUsedAt = unixOr(created), unixOr(used)
	return c, nil
}

func (s oauthStore) TouchClient(ctx context.Context, id string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE oauth_clients SET last_used_at = ? WHERE id = ?`, at.Unix(), id); err != nil {
		return fmt.Errorf("updating client %q: %w", id, err)
	}
	return nil
}

func (s oauthStore) CountClients(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_clients`).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting clients: %w", err)
	}
	return n, nil
}

func (s oauthStore) DeleteUnusedClients(ctx context.Context, createdBefore time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM oauth_clients WHERE last_used_at = 0 AND created_at < ?`, createdBefore.Unix())
	if err != nil {
		return 0, fmt.Errorf("deleting unused clients: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func (s oauthStore) PutRequest(ctx context.Context, r store.OAuthRequest) error {
	data := r.Data
	if data == nil {
		data = []byte{} // not NULL, which the column refuses
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_requests (id, client_id, data, code_hash, expires_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET client_id = excluded.client_id, data = excluded.data, expires_at = excluded.expires_at`,
		r.ID, r.ClientID, data, r.CodeHash, r.ExpiresAt.Unix())
	if err != nil {
		return fmt.Errorf("storing authorization request: %w", err)
	}
	return nil
}

// IssueCode sets the code in one conditional UPDATE: of two callers, the
// second waits for the first's write (SQLite's write lock, PostgreSQL's
// row lock), then finds the code set.
func (s oauthStore) IssueCode(ctx context.Context, id, codeHash string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE oauth_requests SET code_hash = ? WHERE id = ? AND code_hash = '' AND expires_at > ?`, codeHash, id, now.Unix())
	if err != nil {
		return fmt.Errorf("issuing a code: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := s.Request(ctx, id, now); err != nil {
		return err
	}
	return fmt.Errorf("authorization request: a code was issued already: %w", store.ErrConflict)
}

func (s oauthStore) Request(ctx context.Context, id string, now time.Time) (store.OAuthRequest, error) {
	return s.request(ctx, `id = ?`, id, now)
}

// RequestByCode takes the code off its request in one UPDATE … RETURNING:
// of two callers racing with one code, the second waits for the first's
// write, sees the code gone and gets no row.
func (s oauthStore) RequestByCode(ctx context.Context, codeHash string, now time.Time) (store.OAuthRequest, error) {
	if codeHash == "" || codeHash == store.SpentCode {
		return store.OAuthRequest{}, fmt.Errorf("authorization request: %w", store.ErrNotFound)
	}
	var r store.OAuthRequest
	var exp int64
	err := s.db.QueryRowContext(ctx, `UPDATE oauth_requests SET code_hash = '`+store.SpentCode+`' WHERE code_hash = ? AND expires_at > ? RETURNING id, client_id, data, expires_at`, codeHash, now.Unix()).
		Scan(&r.ID, &r.ClientID, &r.Data, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return store.OAuthRequest{}, fmt.Errorf("authorization request: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.OAuthRequest{}, fmt.Errorf("reading authorization request: %w", err)
	}
	r.ExpiresAt = unixOr(exp)
	return r, nil
}

func (s oauthStore) request(ctx context.Context, where, key string, now time.Time) (store.OAuthRequest, error) {
	var r store.OAuthRequest
	var exp int64
	err := s.db.QueryRowContext(ctx, `SELECT id, client_id, data, code_hash, expires_at FROM oauth_requests WHERE `+where+` AND expires_at > ?`, key, now.Unix()).
		Scan(&r.ID, &r.ClientID, &r.Data, &r.CodeHash, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return store.OAuthRequest{}, fmt.Errorf("authorization request: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.OAuthRequest{}, fmt.Errorf("reading authorization request: %w", err)
	}
	r.ExpiresAt = unixOr(exp)
	return r, nil
}

func (s oauthStore) DeleteRequest(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM oauth_requests WHERE id = ?`, id); err != nil {
		return fmt.Errorf("deleting authorization request: %w", err)
	}
	return nil
}

func insertToken(ctx context.Context, db execer, t store.OAuthToken) error {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = time.Now()
	}
	var hash any
	if t.Hash != "" {
		hash = t.Hash
	}
	_, err := db.ExecContext(ctx, `INSERT INTO oauth_tokens (id, kind, hash, family, client_id, principal, scopes, audience, auth_time, created_at, expires_at, rotated_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Kind, hash, t.Family, t.ClientID, t.Principal, strings.Join(t.Scopes, " "), strings.Join(t.Audience, " "),
		unixOrNil(t.AuthTime), t.CreatedAt.Unix(), t.ExpiresAt.Unix(), unixOrNil(t.RotatedAt), unixOrNil(t.RevokedAt))
	if db.duplicate(err) {
		return fmt.Errorf("token %q: %w", t.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing token: %w", err)
	}
	return nil
}

// unixOrNil is the Unix time of t, 0 for the zero time.
func unixOrNil(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func (s oauthStore) CreateToken(ctx context.Context, t store.OAuthToken) error {
	return insertToken(ctx, s.db, t)
}

const tokenColumns = `id, kind, COALESCE(hash, ''), family, client_id, principal, scopes, audience, auth_time, created_at, expires_at, rotated_at, revoked_at`

type scanner interface{ Scan(dest ...any) error }

func scanToken(row scanner) (store.OAuthToken, error) {
	var t store.OAuthToken
	var scopes, aud string
	var auth, created, exp, rotated, revoked int64
	if err := row.Scan(&t.ID, &t.Kind, &t.Hash, &t.Family, &t.ClientID, &t.Principal, &scopes, &aud, &auth, &created, &exp, &rotated, &revoked); err != nil {
		return store.OAuthToken{}, err
	}
	t.Scopes, t.Audience = splitNonEmpty(scopes, " "), splitNonEmpty(aud, " ")
	t.AuthTime, t.CreatedAt, t.ExpiresAt = unixOr(auth), unixOr(created), unixOr(exp)
	t.RotatedAt, t.RevokedAt = unixOr(rotated), unixOr(revoked)
	return t, nil
}

func (s oauthStore) token(ctx context.Context, where, key string) (store.OAuthToken, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM oauth_tokens WHERE `+where, key))
	if errors.Is(err, sql.ErrNoRows) {
		return store.OAuthToken{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.OAuthToken{}, fmt.Errorf("reading token: %w", err)
	}
	return t, nil
}

func (s oauthStore) Token(ctx context.Context, id string) (store.OAuthToken, error) {
	return s.token(ctx, `id = ?`, id)
}

func (s oauthStore) TokenByHash(ctx context.Context, hash string) (store.OAuthToken, error) {
	return s.token(ctx, `hash = ? AND kind = 'refresh'`, hash)
}

// Rotate marks the token rotated with a conditional UPDATE and stores its
// successors in the same transaction: of two rotations racing, the second
// waits for the first's write and then finds the token rotated.
func (s oauthStore) Rotate(ctx context.Context, id string, at time.Time, next ...store.OAuthToken) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rotating token: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE oauth_tokens SET rotated_at = ? WHERE id = ? AND kind = 'refresh' AND rotated_at = 0 AND revoked_at = 0`, at.Unix(), id)
	if err != nil {
		return fmt.Errorf("rotating token: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("refresh token %q is rotated, revoked or unknown: %w", id, store.ErrConflict)
	}
	for _, t := range next {
		if err := insertToken(ctx, tx, t); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("rotating token: %w", err)
	}
	return nil
}

func (s oauthStore) RevokeFamily(ctx context.Context, family string, at time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE oauth_tokens SET revoked_at = ? WHERE family = ? AND revoked_at = 0`, at.Unix(), family)
	if err != nil {
		return 0, fmt.Errorf("revoking tokens: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func (s oauthStore) RefreshTokens(ctx context.Context, now time.Time) ([]store.OAuthToken, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenColumns+` FROM oauth_tokens
		WHERE kind = 'refresh' AND rotated_at = 0 AND revoked_at = 0 AND expires_at > ? ORDER BY created_at DESC, id`, now.Unix())
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	defer rows.Close()
	var out []store.OAuthToken
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("listing tokens: %w", err)
		}
		t.Hash = ""
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s oauthStore) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	var total int64
	for _, q := range []string{`DELETE FROM oauth_requests WHERE expires_at < ?`, `DELETE FROM oauth_tokens WHERE expires_at < ?`} {
		res, err := s.db.ExecContext(ctx, q, before.Unix())
		if err != nil {
			return int(total), fmt.Errorf("deleting expired grants: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return int(total), nil
}

func (s oauthStore) SigningKey(ctx context.Context) ([]byte, error) {
	var key []byte
	err := s.db.QueryRowContext(ctx, `SELECT key FROM oauth_keys WHERE id = 1`).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("signing key: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	return key, nil
}

func (s oauthStore) PutSigningKey(ctx context.Context, key []byte) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_keys (id, key) VALUES (1, ?)`, key)
	if s.db.duplicate(err) {
		return fmt.Errorf("signing key: %w", store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing the signing key: %w", err)
	}
	return nil
}

func (s oauthStore) DeleteSigningKey(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM oauth_keys WHERE id = 1`); err != nil {
		return fmt.Errorf("deleting the signing key: %w", err)
	}
	return nil
}

// splitNonEmpty splits s by sep, "" giving none.
func splitNonEmpty(s, sep string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}

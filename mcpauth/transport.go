package mcpauth

import (
	"context"
	"net/http"

	"github.com/legate-mcp/legate"
)

// Caller is the principal a request to an upstream acts for.
type Caller struct{ Tenant, Principal string }

type callerKey struct{}

// WithCaller returns ctx whose requests to an OAuth-protected upstream
// carry c's own token.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom is the caller ctx carries; ok is false without one.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Tokens gives a principal's access token to an upstream, and the error
// of a principal not connected (connections.Manager).
type Tokens interface {
	Token(ctx context.Context, tenant, principal, id, refused string) (string, error)
	NotConnected(instance, principal, why string) *legate.Error
}

// Transport sets each request's Authorization to its caller's token to
// the upstream ID: Caller's when set (the transport of one principal's
// session, whose background requests carry no caller), else the one the
// request's context carries. A 401 answer is retried once with the token refreshed
// (when it can be). The token never leaves the request: an error or an
// answer naming it has it masked.
type Transport struct {
	Base   http.RoundTripper
	ID     string
	Tokens Tokens
	Caller *Caller
}

func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	c, ok := CallerFrom(r.Context())
	if t.Caller != nil {
		c, ok = *t.Caller, true
	}
	if !ok {
		return nil, legate.Errorf(legate.CodeNotConnected, "%s is an OAuth-protected upstream: a request to it needs a calling principal's connection", t.ID)
	}
	tok, err := t.Tokens.Token(r.Context(), c.Tenant, c.Principal, t.ID, "")
	if err != nil {
		return nil, err
	}
	res, err := t.send(r, tok)
	if err != nil || res.StatusCode != http.StatusUnauthorized || r.GetBody == nil && r.Body != nil && r.Body != http.NoBody {
		return res, err
	}
	res.Body.Close()
	again, terr := t.Tokens.Token(r.Context(), c.Tenant, c.Principal, t.ID, tok)
	switch {
	case terr != nil:
		return nil, terr
	case again == tok:
		return nil, t.Tokens.NotConnected(t.ID, c.Principal, "has a connection whose token the server refuses")
	}
	if r.GetBody != nil {
		body, berr := r.GetBody()
		if berr != nil {
			return nil, berr
		}
		r = r.Clone(r.Context())
		r.Body = body
	}
	return t.send(r, again)
}

func (t *Transport) send(r *http.Request, tok string) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	res, err := t.Base.RoundTrip(r)
	if err != nil {
		return nil, maskedErr{err: err, s: legate.NewSecrets(tok)}
	}
	return res, nil
}

// maskedErr is a transport error with the token masked from its text.
type maskedErr struct {
	err error
	s   *legate.Secrets
}

func (e maskedErr) Error() string { return e.s.MaskString(e.err.Error()) }
func (e maskedErr) Unwrap() error { return e.err }

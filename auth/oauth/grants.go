package oauth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

// GrantPrefix begins the name of a grant in `legate token list`.
const GrantPrefix = "oauth:"

// grantIDLen is how much of a grant's family id its name shows.
const grantIDLen = 16

// Grant is what a person allowed a client: the live refresh token of one
// authorization, renewed at each refresh.
type Grant struct {
	// Name is GrantPrefix and the start of the family id: what
	// RevokeGrant takes.
	Name       string
	Principal  string
	ClientID   string
	ClientName string
	Created    time.Time
	Expires    time.Time
}

// Grants lists the live grants, newest first.
func Grants(ctx context.Context, st store.Store) ([]Grant, error) {
	toks, err := st.OAuth().RefreshTokens(ctx, timeNow())
	if err != nil {
		return nil, err
	}
	out := make([]Grant, 0, len(toks))
	for _, t := range toks {
		g := Grant{Name: GrantPrefix + t.Family[:min(grantIDLen, len(t.Family))], Principal: t.Principal, ClientID: t.ClientID, Created: t.CreatedAt, Expires: t.ExpiresAt}
		if c, err := st.OAuth().Client(ctx, t.ClientID); err == nil {
			g.ClientName = c.Name
		}
		out = append(out, g)
	}
	return out, nil
}

// RevokeGrant revokes the grant named name (as Grants names it): its
// refresh token and every access token of it stop working at once.
func RevokeGrant(ctx context.Context, st store.Store, name string) error {
	prefix, ok := strings.CutPrefix(name, GrantPrefix)
	if !ok || prefix == "" {
		return fmt.Errorf("%q is not a grant name (%s…)", name, GrantPrefix)
	}
	toks, err := st.OAuth().RefreshTokens(ctx, timeNow())
	if err != nil {
		return err
	}
	for _, t := range toks {
		if strings.HasPrefix(t.Family, prefix) && len(prefix) >= min(grantIDLen, len(t.Family)) {
			_, err := st.OAuth().RevokeFamily(ctx, t.Family, timeNow())
			return err
		}
	}
	return fmt.Errorf("grant %q: %w", name, store.ErrNotFound)
}

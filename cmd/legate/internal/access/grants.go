package access

import (
	"context"
	"strings"
	"time"

	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/store"
)

// TokenRow is a line of `legate token list`: a static token or an OAuth
// grant, never the token or its hash.
type TokenRow struct {
	Name    string     `json:"name"`
	Tenant  string     `json:"tenant"`
	Role    string     `json:"role"`
	Profile string     `json:"profile"`
	Created time.Time  `json:"created"`
	Revoked *time.Time `json:"revoked,omitempty"`
	// An OAuth grant's (named oauth:…): the client it was given to and
	// when its refresh token expires.
	Client  string     `json:"client,omitempty"`
	Expires *time.Time `json:"expires,omitempty"`
}

// AppendGrants appends the live OAuth grants to rows, named
// "oauth:… (principal)" with the principal's tenant, role and profile.
func AppendGrants(ctx context.Context, st store.Store, rows []TokenRow) ([]TokenRow, error) {
	grants, err := oauth.Grants(ctx, st)
	if err != nil {
		return rows, err
	}
	for _, gr := range grants {
		u, _ := st.Users().Get(ctx, gr.Principal)
		rows = append(rows, TokenRow{Name: gr.Name + " (" + gr.Principal + ")", Tenant: u.Tenant, Role: u.Role, Profile: u.Profile,
			Created: gr.Created, Client: strings.TrimSpace(gr.ClientName + " " + gr.ClientID), Expires: &gr.Expires})
	}
	return rows, nil
}

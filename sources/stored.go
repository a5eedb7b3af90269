package sources

import (
	"context"
	"fmt"
	"strings"

	"github.com/legate-mcp/legate/store"
)

// StoredFingerprint is a fingerprint of the connectors and upstreams st
// holds: it changes when a CLI command or another replica adds, changes
// or removes one, which a serving gateway then reloads.
func StoredFingerprint(ctx context.Context, st store.Store) (string, error) {
	var b strings.Builder
	cs, err := st.Connectors().List(ctx)
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		fmt.Fprintf(&b, "c\x00%s\x00%s\x00%s\x00%s\x00%s\n", c.ID, c.Type, c.Config, c.Credentials, c.CreatedAt)
	}
	us, err := st.Upstreams().List(ctx)
	if err != nil {
		return "", err
	}
	for _, u := range us {
		fmt.Fprintf(&b, "u\x00%s\x00%s\x00%s\n", u.ID, u.Definition, u.CreatedAt)
	}
	return b.String(), nil
}

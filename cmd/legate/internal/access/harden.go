package access

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/store"
)

// TokenEnv names the environment variable holding the static token that
// says who runs the CLI, asked for by a hardened deployment's changes: a
// client's bearer token (TokenRole), not the admin API's token
// (admin.AdminTokenEnv).
const TokenEnv = "LEGATE_TOKEN"

// TokenRole says what TokenEnv holds, for the errors that name it.
const TokenRole = "a client's bearer token, made by legate token create, that says who you are"

// tokenHint is what an error about TokenEnv adds: what it holds and,
// when it holds the admin API's token, that this is another.
func tokenHint(token string) string {
	hint := fmt.Sprintf("%s is %s; %s, the admin API's token, is another", TokenEnv, TokenRole, admin.AdminTokenEnv)
	if token != "" && token == os.Getenv(admin.AdminTokenEnv) {
		hint = fmt.Sprintf("%s holds the admin API's token (the value of %s); it must be %s", TokenEnv, admin.AdminTokenEnv, TokenRole)
	}
	return hint
}

// Mutations are the commands that change the deployment: on a hardened
// one (auth.hardened) only its pinned principals may run them.
var Mutations = []string{
	"connector add", "connector remove",
	"upstream add", "upstream remove", "upstream accept",
	"vault set", "vault rm", "vault rotate",
	"token create", "token revoke",
	"user add", "user passwd", "user disable",
	"connections revoke",
}

// Harden makes every command of Mutations under root check, before it
// runs, that the deployment is not hardened or that LEGATE_TOKEN is the
// token of a pinned principal; it returns root.
func Harden(root *cobra.Command, g Hooks) *cobra.Command {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if run := c.RunE; run != nil && slices.Contains(Mutations, path) {
			check := g.WithEnv(func(cmd *cobra.Command, _ []string, e Env) error { return CheckPinned(cmd, e) })
			c.RunE = func(cmd *cobra.Command, argv []string) error {
				if err := check(cmd, argv); err != nil {
					return err
				}
				return run(cmd, argv)
			}
		}
	}
	walk(root)
	return root
}

// CheckPinned refuses a change to a hardened deployment unless
// LEGATE_TOKEN is the valid token of a pinned principal.
func CheckPinned(cmd *cobra.Command, e Env) error {
	if !e.Config.Auth.Hardened {
		return nil
	}
	token := os.Getenv(TokenEnv)
	if token == "" {
		return fmt.Errorf("hardened deployment: %s changes it, and only pinned principals (auth.pins) may: set %s to a static token of a pinned principal (%s)", cmd.CommandPath(), TokenEnv, tokenHint(token))
	}
	t, err := e.Store.Tokens().ByHash(cmd.Context(), auth.HashToken(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("hardened deployment: %s is not a token of this deployment (%s)", TokenEnv, tokenHint(token))
	case err != nil:
		return err
	case !t.RevokedAt.IsZero():
		return fmt.Errorf("hardened deployment: the token in %s (%q) is revoked", TokenEnv, t.Name)
	case !e.Config.Auth.Pinned(t.Name):
		return auth.NotPinned(t.Name)
	}
	return nil
}

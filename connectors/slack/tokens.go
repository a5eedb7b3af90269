package slack

import (
	"context"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// asCaller is call with credentials that hand the kit the person's token
// when the call has one (the user_token credential, or a per-user
// connection, which supplies it), else the bot's: a call acts as the
// person whenever it can.
func asCaller(call *connectors.Call) *connectors.Call {
	out := *call
	if call.Credentials != nil {
		out.Credentials = personal{call.Credentials}
	}
	return &out
}

// personal resolves the kit's credential (bot_token) to user_token when
// the instance has one.
type personal struct{ connectors.Credentials }

// Get returns user_token's value for bot_token when there is one.
func (p personal) Get(ctx context.Context, name string) (string, error) {
	if name != credBotToken {
		return p.Credentials.Get(ctx, name)
	}
	switch {
	case p.Credentials.Has(credUserToken):
		return p.Credentials.Get(ctx, credUserToken)
	case p.Credentials.Has(credBotToken):
		return p.Credentials.Get(ctx, credBotToken)
	}
	return "", &legate.Error{Code: legate.CodeConfigError, Err: connectors.ErrNoCredential,
		Message: "the instance has neither credentials.bot_token (the Slack app's bot token, xoxb-...) nor credentials.user_token (a person's, xoxp-...): add one, or make the instance per-user (credentials_mode: per_user with an oauth app)"}
}

// Has reports bot_token present when either token is.
func (p personal) Has(name string) bool {
	if name == credBotToken {
		return p.Credentials.Has(credBotToken) || p.Credentials.Has(credUserToken)
	}
	return p.Credentials.Has(name)
}

// wrapTools makes every tool's calls act as the caller (see asCaller).
func wrapTools(tools []connectors.Tool) []connectors.Tool {
	for i := range tools {
		run := tools[i].Run
		tools[i].Run = func(ctx context.Context, call *connectors.Call) (*legate.Result, error) {
			return run(ctx, asCaller(call))
		}
	}
	return tools
}

// needUserToken fails a tool Slack serves only to a user token.
func needUserToken(call *connectors.Call, tool string) error {
	if call.Credentials != nil && call.Credentials.Has(credUserToken) {
		return nil
	}
	return legate.Errorf(legate.CodeConfigError, "slack: %s needs a user token, which Slack requires for it: add credentials.user_token (a person's xoxp-... token with the search:read scope), or make the instance per-user (credentials_mode: per_user) so that each caller's own connection supplies it", tool)
}

package gcore

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/api/option"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// The services [Core.Endpoint] knows.
const (
	Sheets   = "sheets"
	Drive    = "drive"
	Docs     = "docs"
	Gmail    = "gmail"
	Calendar = "calendar"
)

// APIVersions are the version of each service's API the connector
// speaks: those of its google.golang.org/api client packages (and of
// the paths Endpoint adds).
var APIVersions = map[string]string{Sheets: "v4", Drive: "v3", Docs: "v1", Gmail: "v1", Calendar: "v3"}

// The credentials of a google instance.
const (
	CredRefreshToken   = "refresh_token"
	CredClientSecret   = "client_secret"
	CredServiceAccount = "service_account_json"
)

// KindFile is the kind of the refs of Drive files, folders, documents
// and spreadsheets alike (each is a Drive file).
const KindFile = "file"

// Options are what a Core needs of the instance's config.
type Options struct {
	// ClientID is the OAuth client a refresh token was issued to.
	ClientID string
	// OAuthURL is the token endpoint, for refresh tokens and service
	// accounts alike.
	OAuthURL string
	// Subject is the user a service account acts as (domain-wide
	// delegation); "" for the service account itself.
	Subject string
	// Endpoints are the base URLs by service, as configured (with a final
	// slash, without the service's own path).
	Endpoints map[string]string
	// HTTP is the guarded client every request goes through.
	HTTP *http.Client
}

// Core is what an instance's services share.
type Core struct {
	// Kit is the instance's SaaS kit.
	Kit *saas.Kit
	// HTTP is the guarded client every request goes through.
	HTTP *http.Client
	// Scopes are those a service account's assertion asks for: the
	// scopes of the instance's tools ([Needed]); set once, before calls.
	Scopes []string

	opts   Options
	tokens tokens
}

// New returns the core of instance inst; kit are the kit's options of
// the config's retry settings, to which it adds the credential and the
// exchange.
func New(inst connectors.Instance, kit saas.Options, o Options) *Core {
	c := &Core{HTTP: o.HTTP, opts: o, tokens: newTokens()}
	kit.Provider, kit.Credential = "google", credential
	kit.Exchange, kit.Masked = c.exchange, []string{CredClientSecret, CredRefreshToken, CredServiceAccount}
	c.Kit = saas.New(inst, kit)
	return c
}

// Endpoint is the base URL of service's API, to pass to its client as
// option.WithEndpoint: the configured URL, with drive/v3/ or
// calendar/v3/ added for Drive and Calendar (whose paths do not start
// with their version).
func (c *Core) Endpoint(service string) string {
	u := c.opts.Endpoints[service]
	switch service {
	case Drive, Calendar:
		return u + service + "/" + APIVersions[service] + "/"
	}
	return u
}

// Read runs fn through Kit.Read with the call's credential, fn's errors
// made canonical by [MapError].
func (c *Core) Read(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, token string) error) error {
	return c.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		return MapError(ctx, fn(ctx, token))
	})
}

// Client is the HTTP client authorised for the call's credential: it
// sends the access token held for it, exchanged first when none is.
// Inside Kit.Read prefer [Core.ClientFor] with the attempt's token, which
// the kit exchanges again after a 401.
func (c *Core) Client(ctx context.Context, call *connectors.Call) (*http.Client, error) {
	cred, err := c.Kit.Token(ctx, call)
	if err != nil {
		return nil, err
	}
	access, err := c.exchange(ctx, call, cred, "")
	if err != nil {
		return nil, err
	}
	return c.ClientFor(access), nil
}

// ClientFor is the HTTP client sending access, the access token the kit
// handed an attempt: on the guarded transport, its answers bounded by
// MaxAnswerBytes.
func (c *Core) ClientFor(access string) *http.Client {
	if h := c.tokens.access(access); h != nil {
		return h.client(c)
	}
	return (&held{access: access}).client(c)
}

// Service returns the google.golang.org/api service named service (a
// constant of this package) built by build (drive.NewService,
// gmail.NewService...) on the client sending token, at the service's
// endpoint, its logging off; kept beside the token while it is held.
func Service[T any](c *Core, ctx context.Context, token, service string, build func(context.Context, ...option.ClientOption) (*T, error)) (*T, error) {
	h := c.tokens.access(token)
	if h == nil { // dropped from the cache since the exchange: one of its own
		h = &held{access: token}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.services[service].(*T); ok {
		return s, nil
	}
	s, err := build(ctx, option.WithHTTPClient(h.clientLocked(c)), option.WithEndpoint(c.Endpoint(service)),
		option.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "google: %s_url: %v", service, err)
	}
	if h.services == nil {
		h.services = map[string]any{}
	}
	h.services[service] = s
	return s, nil
}

// client is h's HTTP client, built once.
func (h *held) client(c *Core) *http.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clientLocked(c)
}

func (h *held) clientLocked(c *Core) *http.Client {
	if h.hc == nil {
		hc := *c.HTTP // its transport bounds each request; no Client.Timeout
		hc.Transport = &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.access, TokenType: "Bearer"}),
			Base: capped{c.HTTP.Transport}}
		h.hc = &hc
	}
	return h.hc
}

// FileID resolves a file given by ref or by its Drive id, the arguments
// named refName and idName.
func (c *Core) FileID(call *connectors.Call, ref, id, refName, idName string) (string, error) {
	switch {
	case ref != "" && id != "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give %s or %s, not both", refName, idName)
	case ref != "":
		return c.Kit.Resolve(call, KindFile, ref)
	case id == "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: give %s (a ref) or %s", refName, idName)
	case len(id) > 200 || strings.ContainsAny(id, "/?#%\\ \t\r\n'"):
		return "", legate.Errorf(legate.CodeInvalidArgument, "google: %s: not a Google id: %q", idName, id)
	}
	return id, nil
}

// A Need is a tool and the OAuth scopes (short, after
// https://www.googleapis.com/auth/) any one of which lets it work, the
// one to ask for first.
type Need struct {
	Tool   string
	Scopes []string
}

// ScopePrefix starts every Google OAuth scope.
const ScopePrefix = "https://www.googleapis.com/auth/"

// Needed are the scopes (full URLs) to ask for so that every tool of
// needs works: the first scope of each tool that no scope asked already
// serves, the tools with the fewest choices first (the writes).
func Needed(needs []Need) []string {
	order := make([]Need, len(needs))
	copy(order, needs)
	for i := 1; i < len(order); i++ { // stable insertion sort by number of choices
		for j := i; j > 0 && len(order[j].Scopes) < len(order[j-1].Scopes); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	var out []string
	have := map[string]bool{}
	for _, n := range order {
		served := false
		for _, s := range n.Scopes {
			served = served || have[s]
		}
		if !served && len(n.Scopes) > 0 {
			have[n.Scopes[0]] = true
			out = append(out, ScopePrefix+n.Scopes[0])
		}
	}
	return out
}

package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// `legate connect` prints the consent URL and waits; a person (here an
// HTTP client) approves at the provider, the provider sends them back to
// the serving gateway, and the command sees the connection in the store.
// `legate connections list` shows it without its tokens, and `revoke`
// forgets it.
func TestConnectPrintsTheURLAndWaits(t *testing.T) {
	ctx := context.Background()
	provider := oauthtest.New("client-1", "secret-1", "xoxp-")
	slack := oauthtest.Serve(t, provider)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	state := t.TempDir()
	t.Setenv("LEGATE_STATE_DIR", state)
	t.Setenv("CONNECT_CLIENT_SECRET", "secret-1")
	t.Setenv("LEGATE_TOKEN", "")
	cfgPath := writeConfig(t, `
auth: {resource: "`+base+`/mcp", tokens: true}
connectors:
  - type: slack
    credentials_mode: per_user
    config: {api_url: "`+slack+`/api/", allow_private_networks: true}
    oauth:
      client_id: client-1
      client_secret: {env: CONNECT_CLIENT_SECRET}
      authorize_url: "`+slack+`/oauth/authorize"
      token_url: "`+slack+`/oauth/token"
      revoke_url: "`+slack+`/oauth/revoke"
`)
	// The serving gateway, on the same store and vault as the CLI.
	serveCLIStore(t, cfgPath, state, ln)

	root := newRoot()
	out := &syncbuf.Buffer{}
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs([]string{"--config", cfgPath, "connect", "slack", "--principal", "alice", "--tenant", "acme"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	urlRE := regexp.MustCompile(`(?m)^  (http\S+)$`)
	var consent string
	for consent == "" {
		select {
		case err := <-done:
			t.Fatalf("connect ended before a URL: %v\n%s", err, out)
		default:
		}
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			consent = m[1]
		}
		time.Sleep(10 * time.Millisecond) // polling the output, not a deadline
	}
	// The URL is Legate's page, which says who is being connected; the
	// person goes on from it to the provider's consent.
	if !strings.HasPrefix(consent, base+"/connect/slack?ticket=") || !strings.Contains(out.String(), "connect slack for alice (tenant acme)") {
		t.Fatalf("connect URL %s\n%s", consent, out)
	}
	page, err := oauthtest.NewBrowser("alice-slack").Connect(consent)
	if err != nil || !strings.Contains(page, "slack is connected for alice (tenant acme)") {
		t.Fatalf("the consent: %v: %s", err, page)
	}
	if err := <-done; err != nil || !strings.Contains(out.String(), "connected: slack for alice") {
		t.Fatalf("connect: %v\n%s", err, out)
	}

	got, err := runCLI(t, "--config", cfgPath, "connections", "list")
	if err != nil || !regexp.MustCompile(`slack\s+alice\s+acme\s+connected`).MatchString(got) {
		t.Fatalf("list: %v\n%s", err, got)
	}
	for _, tok := range provider.Issued() {
		if strings.Contains(got+out.String()+page, tok) {
			t.Fatalf("a token was printed")
		}
	}
	if got, err := runCLI(t, "--config", cfgPath, "connections", "revoke", "slack", "--principal", "alice", "--tenant", "acme"); err != nil {
		t.Fatalf("revoke: %v\n%s", err, got)
	}
	if got, _ := runCLI(t, "--config", cfgPath, "connections", "list"); !strings.Contains(got, "no connections") {
		t.Fatalf("after revoking:\n%s", got)
	}
	if len(provider.Revoked()) != 2 {
		t.Fatalf("the provider revoked %d tokens", len(provider.Revoked()))
	}
}

// serveCLIStore serves on ln, until t's cleanup, a gateway of the config
// at cfgPath on the store and vault the CLI keeps in state, as `legate
// serve` would beside the CLI's commands.
func serveCLIStore(t *testing.T, cfgPath, state string, ln net.Listener) (*server.Gateway, store.Store) {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(state, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st, Vault: vault.New(st.Secrets(), vault.SourceFromEnv(os.Getenv, state), nil)})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: gw.Handler(ln.Addr().String())}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); gw.Close() })
	return gw, st
}

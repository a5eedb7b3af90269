package google_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
)

// The first tools' names reach the tools through the gateway, by their
// canonical and their wire form, and are not listed.
func TestSeedNamesAreAliases(t *testing.T) {
	s := newStandin(t)
	s.fill("sheet-1", "Sheet1", 2, 2)
	s.seedFiles(2)
	t.Setenv("ALIAS_GOOGLE_REFRESH", refreshToken)
	t.Setenv("ALIAS_GOOGLE_SECRET", clientSecret)
	g := servertest.Start(t, `
connectors:
  - type: google
    config: {client_id: "`+clientID+`", oauth_url: "`+s.srv.URL+`/token", sheets_url: "`+s.srv.URL+`/", drive_url: "`+s.srv.URL+`/", allow_private_networks: true, retry_backoff: 1ms}
    credentials: {refresh_token: {env: ALIAS_GOOGLE_REFRESH}, client_secret: {env: ALIAS_GOOGLE_SECRET}}
`)
	for name, args := range map[string]string{
		"gsheets.read_range":  `{"spreadsheet_id":"sheet-1","range":"Sheet1"}`,
		"gsheets__read_range": `{"spreadsheet_id":"sheet-1","range":"Sheet1"}`,
		"gdrive.list_files":   `{}`,
		"gdrive.get_file":     `{"file_id":"f01"}`,
	} {
		res, err := g.GW.Call(context.Background(), name, json.RawMessage(args), server.CallOptions{IdempotencyKey: "k-" + name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			b, _ := json.Marshal(res)
			t.Fatalf("%s: %s", name, b)
		}
	}
	for _, tool := range g.GW.Catalog().ListResult().Tools {
		if strings.HasPrefix(tool.Name, "gsheets") || strings.HasPrefix(tool.Name, "gdrive") {
			t.Errorf("an alias is listed: %s", tool.Name)
		}
	}
	if s.requests("get") < 2 || s.requests("files") != 1 || s.requests("file") != 1 {
		t.Fatalf("%d range reads, %d listings, %d file reads", s.requests("get"), s.requests("files"), s.requests("file"))
	}
}

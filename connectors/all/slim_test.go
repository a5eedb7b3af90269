package all_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

// TestSlimBuild builds cmd/legate with the tags custom, connector_http and
// connector_webhook, and checks that `legate connector types` lists those
// two types and no other, that the binary links none of the client
// libraries of the types left out, and that it is smaller than the default
// build of the same flags.
func TestSlimBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	dir := t.TempDir()
	build := func(name string, tags ...string) (string, int64) {
		t.Helper()
		bin := filepath.Join(dir, name)
		args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", bin}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		cmd := exec.Command("go", append(args, "./cmd/legate")...)
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		fi, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		return bin, fi.Size()
	}
	slim, slimSize := build("legate-slim", "custom", "connector_http", "connector_webhook")

	out, err := exec.Command(slim, "connector", "types", "-o", "json").Output()
	if err != nil {
		t.Fatalf("legate connector types: %v", err)
	}
	var types []struct{ Name string }
	if err := json.Unmarshal(out, &types); err != nil {
		t.Fatalf("legate connector types -o json: %v\n%s", err, out)
	}
	var names []string
	for _, ty := range types {
		names = append(names, ty.Name)
	}
	slices.Sort(names)
	if want := []string{"http", "webhook"}; !slices.Equal(names, want) {
		t.Errorf("the slim build lists the connector types %v, want %v", names, want)
	}

	// The client libraries of the types left out are not linked at all.
	mods, err := exec.Command("go", "version", "-m", slim).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, m := range []string{
		"github.com/stripe/stripe-go/", "github.com/slack-go/slack", "github.com/google/go-github/",
		"github.com/jomei/notionapi", "google.golang.org/api", "github.com/go-sql-driver/mysql",
		"github.com/emersion/go-imap/", "github.com/wneessen/go-mail",
	} {
		if strings.Contains(string(mods), "\tdep\t"+m) {
			t.Errorf("the slim build links %s", m)
		}
	}

	_, fullSize := build("legate-full")
	if slimSize >= fullSize {
		t.Errorf("the slim build is %d bytes, the full one %d: want it smaller", slimSize, fullSize)
	}
	t.Logf("full build %.1f MB, slim build (http, webhook) %.1f MB", float64(fullSize)/1e6, float64(slimSize)/1e6)
	if n := len(connectors.Types()); n <= len(names) {
		t.Errorf("the default build (this test) registers %d types, the slim one %d", n, len(names))
	}
}

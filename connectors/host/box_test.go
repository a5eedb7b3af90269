package host_test

import (
	"strings"
	"testing"
)

func TestHostTools(t *testing.T) {
	t.Setenv("MY_API_TOKEN", "sup3r-s3cret-value")
	t.Setenv("DATABASE_URL", "postgres://app:pw-12345@db.internal/app")
	t.Setenv("ECHOED", "prefix sup3r-s3cret-value suffix")
	t.Setenv("PLAIN_SETTING", "visible")
	ws, g := workspace(t, "allow_shell: true\nshell_allowlist: [git]")
	cs := g.connect(t, nil)

	info := ok(t, cs, "host_info", map[string]any{})
	limits := info["limits"].(map[string]any)
	if info["workspace"] != ws || info["hostname"] == "" || limits["shell"] != true || toJSON(limits["shell_allowlist"]) != `["git"]` || limits["max_tool_output_bytes"].(float64) != 32768 {
		t.Fatalf("host_info: %v", info)
	}

	o := call(t, cs, "host_env", map[string]any{})
	if o.isError || strings.Contains(o.text, "sup3r-s3cret-value") || strings.Contains(o.text, "pw-12345") {
		t.Fatalf("host_env shows a credential: %s", o.text)
	}
	vars := o.data["variables"].(map[string]any)
	if vars["PLAIN_SETTING"] != "visible" || vars["MY_API_TOKEN"] != "[redacted]" ||
		vars["DATABASE_URL"] != "postgres://app:[redacted]@db.internal/app" || vars["ECHOED"] != "prefix [redacted] suffix" {
		t.Fatalf("host_env: %v", vars)
	}

	disk := ok(t, cs, "host_disk", map[string]any{})
	if disk["total_bytes"].(float64) <= 0 {
		t.Fatalf("host_disk: %v", disk)
	}
	netw := ok(t, cs, "host_net", map[string]any{})
	if !strings.Contains(toJSON(netw), "127.0.0.1") {
		t.Fatalf("host_net has no loopback address: %v", netw)
	}
}

// A command run by sh_exec does not see Legate's credentials.
func TestShellEnvironmentHasNoCredentials(t *testing.T) {
	t.Setenv("MY_API_TOKEN", "sup3r-s3cret-value")
	t.Setenv("LEGATE_MASTER_KEY", "master-key-value")
	_, g := workspace(t, "allow_shell: true")
	r := ok(t, g.connect(t, nil), "sh_exec", map[string]any{"command": "env"})
	if out := r["stdout"].(string); strings.Contains(out, "sup3r-s3cret-value") || strings.Contains(out, "master-key-value") || !strings.Contains(out, "PATH=") {
		t.Fatalf("env of a command:\n%s", out)
	}
}

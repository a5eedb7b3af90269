package statedir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/legate-mcp/legate/statedir"
)

func TestDirOrder(t *testing.T) {
	home := t.TempDir()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg := filepath.Join(home, "proj", "config.yaml")
	cases := []struct {
		name, flag, stateDir, cfg string
		env                       map[string]string
		want, by                  string
	}{
		{"flag first", "/a", "./state", cfg, map[string]string{"LEGATE_STATE_DIR": "/b"}, "/a", "--state-dir"},
		{"then the variable", "", "./state", cfg, map[string]string{"LEGATE_STATE_DIR": "/b"}, "/b", "$LEGATE_STATE_DIR"},
		{"then state_dir, relative to the config file", "", "./state", cfg, nil, filepath.Join(home, "proj", "state"), "state_dir in " + cfg},
		{"an absolute state_dir", "", "/srv/legate", cfg, nil, "/srv/legate", "state_dir in " + cfg},
		{"then XDG_STATE_HOME", "", "", "", map[string]string{"XDG_STATE_HOME": "/x"}, "/x/legate", "the default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, by, err := statedir.Dir(tc.flag, env(tc.env), tc.stateDir, tc.cfg)
			if err != nil || got != tc.want || by != tc.by {
				t.Fatalf("Dir = %q, %q, %v; want %q, %q", got, by, err, tc.want, tc.by)
			}
			if p := (statedir.Place{DirBy: by}); p.Default() != (tc.by == "the default") {
				t.Errorf("Default() = %v for %q", p.Default(), by)
			}
		})
	}
}

func TestDirIsAbsolute(t *testing.T) {
	got, _, err := statedir.Dir("rel/state", func(string) string { return "" }, "", "")
	wd, _ := os.Getwd()
	if err != nil || got != filepath.Join(wd, "rel", "state") {
		t.Fatalf("Dir(rel/state) = %q, %v; want it made absolute", got, err)
	}
}

func TestConfigFileOrder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	none := func(string) string { return "" }
	if p, by := statedir.ConfigFile("", none); p != "" || by != "" {
		t.Fatalf("with no config.yaml here: %q, %q", p, by)
	}
	os.WriteFile("config.yaml", []byte("{}\n"), 0o600)
	if p, by := statedir.ConfigFile("", none); p != "config.yaml" || by != "./config.yaml" {
		t.Fatalf("with config.yaml here: %q, %q", p, by)
	}
	env := func(k string) string { return map[string]string{"LEGATE_CONFIG": "/etc/legate.yaml"}[k] }
	if p, by := statedir.ConfigFile("", env); p != "/etc/legate.yaml" || by != "$LEGATE_CONFIG" {
		t.Fatalf("$LEGATE_CONFIG: %q, %q", p, by)
	}
	if p, by := statedir.ConfigFile("/x.yaml", env); p != "/x.yaml" || by != "--config" {
		t.Fatalf("--config: %q, %q", p, by)
	}
}

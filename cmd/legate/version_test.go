package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	cases := map[string]struct {
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		"ldflags win":           {"v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "v1.2.3"},
		"go install @version":   {"dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		"checkout build":        {"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "dev+0123456789ab"},
		"uncommitted changes":   {"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "dev+0123456789ab-dirty"},
		"no version, no vcs":    {"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		"no build info at all":  {"dev", nil, "dev"},
		"pseudo-version stands": {"dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130174213-cae3379abcd1"}}, "v0.0.0-20261130174213-cae3379abcd1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := buildVersion(c.ldflags, c.bi); got != c.want {
				t.Errorf("buildVersion = %q, want %q", got, c.want)
			}
		})
	}
}

// `legate --version` prints what `legate version` does.
func TestVersionFlag(t *testing.T) {
	flag, err := runCLI(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(flag, "legate ") || flag != cmd {
		t.Errorf("--version printed %q, version %q", flag, cmd)
	}
}

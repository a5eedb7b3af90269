package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."; without
// it, the module version `go install …@vX` stamps, or the commit a checkout
// was built from (buildVersion).
var version = "dev"

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of legate and of its MCP SDK",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
		},
	}
}

// versionLine is what `legate version` and `legate --version` print.
func versionLine() string {
	sdk := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				sdk = d.Version
			}
		}
	}
	return fmt.Sprintf("legate %s (%s, go-sdk %s, %s/%s)", version, runtime.Version(), sdk, runtime.GOOS, runtime.GOARCH)
}

// buildVersion is the version of this binary: the one set with -ldflags
// when there is one, else the module version `go install` records (v1.2.3,
// or a pseudo-version), else the commit of the checkout it was built from
// (dev+0123456789ab, with -dirty for uncommitted changes), else "dev".
func buildVersion(ldflags string, bi *debug.BuildInfo) string {
	if ldflags != "dev" && ldflags != "" {
		return ldflags
	}
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "dev+" + rev + dirty
}

func init() {
	bi, _ := debug.ReadBuildInfo()
	version = buildVersion(version, bi)
}

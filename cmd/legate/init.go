package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/config"
)

// initTemplate is the config `legate init` writes: the few keys a first
// server needs, each explained, the rest in config.yaml.example.
var initTemplate = template.Must(template.New("config").Parse(`# Legate configuration, written by legate init. Every key is optional, and
# config.yaml.example in the Legate repository documents every one.
# Check this file with: legate config validate --config {{.Path}}

# Clients connect to http://{{.Listen}}/mcp. Keep it on loopback unless
# authentication is on (auth: below).
listen: {{.Listen}}

# The state (database, tool caches, vault key file), relative to this file.
state_dir: ./state
{{if .Auth}}
# Every request needs a bearer token: create one with
#   legate token create NAME --role admin --config {{.Path}}
auth:
  tokens: true
{{else}}
# Bearer tokens for every request (required off loopback): uncomment, then
# create one with: legate token create NAME --role admin
# auth:
#   tokens: true
{{end}}
# Reads run at once; everything else waits for a person's approval
# (legate approvals list, legate approvals approve ID).
policy:
  defaults: {read: allow, draft: approve, write: approve, destructive: approve}

# Upstream MCP servers: their tools are offered as mcp.<id>.<tool>.
# legate upstream add ID --url URL (or -- COMMAND ARGS) adds one from the CLI.
{{- if .Upstreams}}
upstreams:
{{- range .Upstreams}}
  - id: {{.ID}}
    url: {{.URL}}
{{- end}}
{{- else}}
upstreams: []
#  - id: everything
#    command: [npx, -y, "@modelcontextprotocol/server-everything"]
#  - id: remote
#    url: https://mcp.example.com/mcp
#    header_env: {Authorization: REMOTE_TOKEN}   # the variable's name, never its value
{{- end}}
`))

type initUpstream struct{ ID, URL string }

func initCmd() *cobra.Command {
	var path, listen string
	var auth, force bool
	var ups []string
	cmd := &cobra.Command{
		Use:   "init [--output config.yaml] [--listen ADDR] [--auth] [--upstream ID=URL]...",
		Short: "Write a commented, minimal config.yaml that validates and serves as it is",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data := struct {
				Path, Listen string
				Auth         bool
				Upstreams    []initUpstream
			}{Path: path, Listen: listen, Auth: auth}
			for _, u := range ups {
				id, url, ok := strings.Cut(u, "=")
				if !ok || id == "" || url == "" {
					return fmt.Errorf("--upstream %q: want ID=URL", u)
				}
				data.Upstreams = append(data.Upstreams, initUpstream{id, url})
			}
			var buf bytes.Buffer
			if err := initTemplate.Execute(&buf, data); err != nil {
				return err
			}
			// What is written must load: a bad flag is refused here, not at serve.
			if _, err := config.Parse(buf.Bytes(), nil); err != nil {
				return fmt.Errorf("init: the config these flags make is not valid: %w", err)
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("init: %s exists; --force replaces it", path)
			}
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			if _, err := f.Write(buf.Bytes()); err != nil {
				f.Close()
				return fmt.Errorf("init: %w", err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("init: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s; start with: legate serve --config %s\n", path, path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&path, "output", "o", "config.yaml", "file to write")
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	f.BoolVar(&auth, "auth", false, "require bearer tokens (legate token create)")
	f.StringArrayVar(&ups, "upstream", nil, "an upstream MCP server, ID=URL (repeatable)")
	f.BoolVar(&force, "force", false, "replace an existing file")
	return cmd
}

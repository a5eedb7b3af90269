package config_test

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/config"
)

// FuzzParse checks config loading on any document: it never panics; it
// is deterministic (the same document gives the same file or the same
// errors, in the same order, as people compare them between runs); every
// error names the key path it is about, starting from a key the document
// has; and a file it accepts validates again.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../config.yaml.example"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"listen: ${HOST}:${PORT}\nstate_dir: /tmp/x\ntool_names: canonical\nlog_level: debug\n",
		"connectors:\n  - {id: web, type: http, config: {base_url: \"https://example.com\"}}\n  - {type: webhook}\n",
		"upstreams:\n  - {id: up, url: \"http://127.0.0.1:1/mcp\", header_env: {Authorization: TOKEN}}\n  - {id: fs, command: [npx, server]}\n",
		"policy:\n  defaults: {write: deny, bogus: maybe}\n  rules:\n    - {tool: \"[\", upstream: \"[\", principal: \"[\", action: allow}\n",
		"profiles:\n  - {name: p, include: [\"mcp.*\"], exclude: [\"[\"], max_tools: -1}\n",
		"auth:\n  tokens: [{token: {env: TOKEN}, principal: alice}]\n",
		"approvals: {wait: 1s, expire: -1s, notify: hook}\naudit: {retention: 1h}\n",
		"listen: ${NOPE}\ncall_timeout: $$5\n",
		"listen: a\nlisten: b\n",
		"${NOPE}\n",
		"- listen\n",
		"\"\": x\n",
	} {
		f.Add([]byte(s))
	}
	env := map[string]string{"HOST": "127.0.0.1", "PORT": "8080", "TOKEN": "t0ken"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := config.Parse(b, lookup)
		again, err2 := config.Parse(b, lookup)
		if errText(err) != errText(err2) || !reflect.DeepEqual(file, again) {
			t.Fatalf("two parses differ:\n%s\nfirst:  %v\nsecond: %v", b, err, err2)
		}
		if err == nil {
			if err := file.Validate(); err != nil {
				t.Fatalf("a parsed file fails validation: %v\n%s", err, b)
			}
			return
		}
		checkKeyPaths(t, err, b)
	})
}

// checkKeyPaths checks that each error starts with a key of the document
// (the path's first key) and has a line, unless the document is not valid YAML or not a
// mapping at all.
func checkKeyPaths(t *testing.T, err error, doc []byte) {
	t.Helper()
	msg := err.Error()
	if strings.HasPrefix(msg, "invalid YAML: ") {
		return
	}
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		t.Fatalf("invalid YAML reported as %v", err)
	}
	keys := rootKeys(&root)
	for _, e := range leafErrors(err) {
		ce, ok := errors.AsType[*config.Error](e)
		if !ok {
			t.Fatalf("%q is not a *config.Error", e)
		}
		text := ce.Err.Error()
		if keys == nil {
			continue // not a mapping: the error is about the whole document
		}
		if ce.Line < 1 {
			t.Fatalf("%q has no line\n%s", e, doc)
		}
		ok = false
		for _, k := range keys {
			rest, found := strings.CutPrefix(text, k)
			ok = ok || found && len(rest) > 0 && strings.ContainsRune(".[:", rune(rest[0]))
		}
		if !ok {
			t.Fatalf("%q names none of the document's keys %q\n%s", text, keys, doc)
		}
	}
}

// rootKeys are the keys of the document's top mapping as error paths
// show them, nil if it is not a mapping.
func rootKeys(doc *yaml.Node) []string {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	keys := []string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == "" {
			k = `""`
		}
		keys = append(keys, k)
	}
	return keys
}

func leafErrors(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leafErrors(e)...)
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A key given twice in config.yaml is an error naming it: before, the last
// value silently won.
func TestDuplicateKeyIsAnError(t *testing.T) {
	_, err := config.Parse([]byte("policy:\n  rules: [{tool: \"*\", action: deny}]\npolicy:\n  rules: []\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "policy: duplicate key (first at line 1)") {
		t.Fatalf("got %v", err)
	}
}

package upstream_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upconfig"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// annotated are tools covering every combination of the hints that matter.
var annotated = []string{
	`{"name":"ro","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	`{"name":"destr","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
	`{"name":"not-destr","inputSchema":{"type":"object"},"annotations":{"destructiveHint":false}}`,
	`{"name":"empty-ann","inputSchema":{"type":"object"},"annotations":{}}`,
	`{"name":"no-ann","inputSchema":{"type":"object"}}`,
	`{"name":"ro-destr","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":true}}`,
	`{"name":"ro-false","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"idempotentHint":true}}`,
}

func TestClassesFollowAnnotations(t *testing.T) {
	noLeaks(t)
	raw, srv := upstreamtest.NewRaw(t, annotated...)
	_ = raw
	no := false
	m := newManager(t, memStore(t), upstream.Options{},
		upstream.Config{ID: "trusted", URL: srv.URL()},
		upstream.Config{ID: "untrusted", URL: srv.URL(), TrustAnnotations: &no},
	)
	ctx := context.Background()
	for _, id := range []string{"trusted", "untrusted"} {
		if _, err := m.Refresh(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]map[string]legate.Class{
		"trusted": {
			"ro": legate.ClassRead, "destr": legate.ClassDestructive, "not-destr": legate.ClassWrite,
			"empty-ann": legate.ClassWrite, "no-ann": legate.ClassWrite,
			// destructiveHint means nothing when readOnlyHint is true (spec).
			"ro-destr": legate.ClassRead, "ro-false": legate.ClassWrite,
		},
		"untrusted": {
			// Never below write; destructive stays destructive.
			"ro": legate.ClassWrite, "destr": legate.ClassDestructive, "not-destr": legate.ClassWrite,
			"empty-ann": legate.ClassWrite, "no-ann": legate.ClassWrite, "ro-false": legate.ClassWrite,
		},
	}
	for id, tools := range want {
		for name, class := range tools {
			tl := tool(m, id, name)
			if tl == nil {
				t.Fatalf("%s/%s not cached", id, name)
			}
			if tl.Class != class {
				t.Errorf("%s/%s: class %s, want %s", id, name, tl.Class, class)
			}
		}
	}
	// Whatever the combination, an untrusted upstream's tool is never read.
	for _, tl := range m.Tools() {
		if tl.Upstream == "untrusted" && tl.Class == legate.ClassRead {
			t.Errorf("untrusted %s classed read", tl.Name)
		}
	}
}

func TestToolFilter(t *testing.T) {
	noLeaks(t)
	def := func(name string) string { return `{"name":"` + name + `","inputSchema":{"type":"object"}}` }
	_, srv := upstreamtest.NewRaw(t, def("get_a"), def("get_b"), def("get_secret_key"), def("list"), def("delete_all"))
	no := false
	m := newManager(t, memStore(t), upstream.Options{},
		upstream.Config{ID: "both", URL: srv.URL(), Tools: upconfig.ToolFilter{Include: []string{"get_*", "list"}, Exclude: []string{"get_secret*"}}},
		upstream.Config{ID: "incl", URL: srv.URL(), Tools: upconfig.ToolFilter{Include: []string{"list"}}},
		upstream.Config{ID: "excl", URL: srv.URL(), Tools: upconfig.ToolFilter{Exclude: []string{"delete_*", "get_?"}}},
		upstream.Config{ID: "all", URL: srv.URL(), Prefix: &no},
	)
	for _, id := range m.IDs() {
		if _, err := m.Refresh(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"both": "get_a get_b list",
		"incl": "list",
		"excl": "get_secret_key list",
		"all":  "delete_all get_a get_b get_secret_key list",
	}
	for id, w := range want {
		if got := strings.Join(names(m, id), " "); got != w {
			t.Errorf("%s: tools %q, want %q", id, got, w)
		}
	}
	if got := tool(m, "both", "list").Canonical(); got != "mcp.both.list" {
		t.Errorf("canonical %q", got)
	}
	if got := tool(m, "all", "list").Canonical(); got != "list" {
		t.Errorf("prefix: false canonical %q", got)
	}
	if st := status(t, m, "both"); st.Tools != 3 {
		t.Errorf("status counts %d tools, want the 3 kept", st.Tools)
	}
}

// oddSchemas are definitions the go-sdk would refuse to register (AddTool
// panics on a schema without "type":"object"), and richer ones, which must
// reach Legate's catalog unchanged.
var oddSchemas = map[string]string{
	"string-schema": `{"type":"string","minLength":1}`,
	"empty-schema":  `{}`,
	"true-schema":   `true`,
	"union-schema":  `{"type":["object","null"],"properties":{"x":{"type":"integer"}}}`,
	"rich-schema":   `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"number","minimum":1.5,"default":10},"e":{"enum":[1,"a",null,{"k":[true]}]},"r":{"$ref":"#/$defs/r"}},"required":["n"],"additionalProperties":false,"$defs":{"r":{"type":"string","pattern":"^[a-z]+$"}},"x-vendor":{"big":12345678901234567890}}`,
}

func oddTools() []string {
	var out []string
	for name, schema := range oddSchemas {
		out = append(out, `{"name":"`+name+`","description":"d","inputSchema":`+schema+`}`)
	}
	out = append(out, `{"name":"with-output","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"v":{"const":1}}}}`)
	return out
}

func TestSchemasPassThroughUnchanged(t *testing.T) {
	noLeaks(t)
	raw, srv := upstreamtest.NewRaw(t, oddTools()...)
	m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "odd", URL: srv.URL()})
	if _, err := m.Refresh(context.Background(), "odd"); err != nil {
		t.Fatal(err)
	}
	for name, schema := range oddSchemas {
		tl := tool(m, "odd", name)
		if tl == nil {
			t.Fatalf("%s not cached (have %v)", name, names(m, "odd"))
		}
		got, err := json.Marshal(tl.Def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if !upstreamtest.SameJSON(got, []byte(schema)) {
			t.Errorf("%s: schema %s, want %s", name, got, schema)
		}
		// The call goes through, arguments as given.
		res, err := m.Call(context.Background(), tl, json.RawMessage(`"just a string"`), upstream.Client{})
		if err != nil || res.IsError {
			t.Errorf("%s: call: %v %v", name, err, res)
		}
	}
	out, _ := json.Marshal(tool(m, "odd", "with-output").Def.OutputSchema)
	if !upstreamtest.SameJSON(out, []byte(`{"type":"object","properties":{"v":{"const":1}}}`)) {
		t.Errorf("output schema %s", out)
	}
	if n := raw.Calls.Load(); n != int64(len(oddSchemas)) {
		t.Errorf("upstream saw %d calls, want %d", n, len(oddSchemas))
	}
}

// A listed tool without inputSchema (against the spec, but seen) is
// served with an object schema, never "inputSchema": null, which strict
// clients reject for the whole list.
func TestMissingInputSchemaBecomesObjectSchema(t *testing.T) {
	noLeaks(t)
	_, srv := upstreamtest.NewRaw(t, `{"name":"bare"}`, `{"name":"nul","inputSchema":null}`)
	m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "bare", URL: srv.URL()})
	if _, err := m.Refresh(context.Background(), "bare"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bare", "nul"} {
		tl := tool(m, "bare", name)
		if tl == nil {
			t.Fatalf("%s not cached: %v", name, names(m, "bare"))
		}
		b, _ := json.Marshal(tl.Def)
		var def struct {
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(b, &def); err != nil || def.InputSchema["type"] != "object" {
			t.Errorf("%s: definition %s, want an object inputSchema", name, b)
		}
	}
}

func TestRefreshReportsDiff(t *testing.T) {
	noLeaks(t)
	def := func(name, desc string) string {
		return `{"name":"` + name + `","description":"` + desc + `","inputSchema":{"type":"object"}}`
	}
	raw, srv := upstreamtest.NewRaw(t, def("a", "1"), def("b", "1"))
	changed := make(chan struct{}, 16)
	m := newManager(t, memStore(t), upstream.Options{OnToolsChanged: func() { changed <- struct{}{} }},
		upstream.Config{ID: "r", URL: srv.URL()})
	drain := func() int {
		n := 0
		for {
			select {
			case <-changed:
				n++
			default:
				return n
			}
		}
	}
	drain()
	ctx := context.Background()
	steps := []struct {
		tools                   []string
		added, removed, changed []string
		notify                  bool
	}{
		{[]string{def("a", "1"), def("b", "1")}, []string{"a", "b"}, nil, nil, true},
		{[]string{def("a", "1"), def("b", "1")}, nil, nil, nil, false},
		// Key order and whitespace do not make a change.
		{[]string{`{ "inputSchema": {"type":"object"}, "description":"1", "name":"b" }`, def("a", "1")}, nil, nil, nil, false},
		{[]string{def("a", "1"), def("b", "2"), def("c", "1")}, []string{"c"}, nil, []string{"b"}, true},
		{[]string{def("a", "1")}, nil, []string{"b", "c"}, nil, true},
	}
	for i, s := range steps {
		raw.SetTools(s.tools...)
		d, err := m.Refresh(ctx, "r")
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !slices.Equal(d.Added, s.added) || !slices.Equal(d.Removed, s.removed) || !slices.Equal(d.Changed, s.changed) {
			t.Errorf("step %d: diff %s, want added %v removed %v changed %v", i, d, s.added, s.removed, s.changed)
		}
		if d.Empty() != (len(s.added)+len(s.removed)+len(s.changed) == 0) {
			t.Errorf("step %d: Empty() = %v", i, d.Empty())
		}
		if got := drain() > 0; got != s.notify {
			t.Errorf("step %d: OnToolsChanged called %v, want %v", i, got, s.notify)
		}
	}
	if got := strings.Join(names(m, "r"), " "); got != "a" {
		t.Errorf("tools %q", got)
	}
	if _, err := m.Refresh(ctx, "nope"); err == nil {
		t.Error("refreshing an unknown upstream succeeded")
	}
}

package strictyaml_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

type server struct {
	Name    string            `yaml:"name" required:"true" desc:"Name"`
	Mode    string            `yaml:"mode" enum:"fast,safe" default:"safe" desc:"Mode"`
	Wait    legate.Duration   `yaml:"wait" default:"30s" min:"0" desc:"Wait"`
	Retries int               `yaml:"retries" default:"3" min:"1" desc:"Retries"`
	On      *bool             `yaml:"on" default:"true" desc:"On"`
	Labels  map[string]string `yaml:"labels" default:"{a: x, b: y}" desc:"Labels"`
}

type root struct {
	Servers []server          `yaml:"servers" desc:"Servers"`
	ByName  map[string]server `yaml:"by_name" desc:"By name"`
	Opt     *server           `yaml:"opt" desc:"Optional"`
	Top     server            `yaml:"top" desc:"Top"`
}

func TestWalkPaths(t *testing.T) {
	var got []string
	err := strictyaml.Walk(reflect.TypeFor[root](), "", nil, func(p string, f strictyaml.Field) {
		if f.Type.Kind() == reflect.Struct || f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Map || strings.HasPrefix(p, "opt") {
			got = append(got, p+"="+strictyaml.Kind(f.Type))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "servers=list servers[].labels=map by_name=map by_name.*.labels=map " +
		"opt=map opt.name=string opt.mode=string opt.wait=duration opt.retries=int opt.on=bool opt.labels=map " +
		"top=map top.labels=map"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestApplyDefaults(t *testing.T) {
	off := false
	r := root{
		Servers: []server{{Name: "a", Mode: "fast", Labels: map[string]string{"a": "mine"}, On: &off}, {Name: "b"}},
		ByName:  map[string]server{"c": {Retries: 7}},
	}
	if err := strictyaml.ApplyDefaults(&r); err != nil {
		t.Fatal(err)
	}
	a, b, c := r.Servers[0], r.Servers[1], r.ByName["c"]
	switch {
	case a.Mode != "fast" || *a.On || a.Labels["a"] != "mine" || a.Labels["b"] != "y":
		t.Errorf("set keys overridden or map not completed: %+v %v", a, *a.On)
	case b.Mode != "safe" || time.Duration(b.Wait) != 30*time.Second || b.Retries != 3 || !*b.On || len(b.Labels) != 2:
		t.Errorf("unset keys not defaulted: %+v", b)
	case c.Retries != 7 || c.Mode != "safe":
		t.Errorf("map values not defaulted: %+v", c)
	case r.Opt != nil:
		t.Errorf("an absent section was created")
	case r.Top.Mode != "safe":
		t.Errorf("nested struct not defaulted")
	}
}

func TestApplyDefaultsRefusesBadTags(t *testing.T) {
	tests := map[string]any{
		"plain bool true": &struct {
			On bool `yaml:"on" default:"true"`
		}{},
		"not a number": &struct {
			N int `yaml:"n" default:"many"`
		}{},
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			if err := strictyaml.ApplyDefaults(v); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestCheck(t *testing.T) {
	r := root{
		Servers: []server{{Name: "a", Mode: "slow", Wait: -1, Retries: 0}, {Mode: "fast", Retries: -2}},
		ByName:  map[string]server{"z": {Name: "z", Retries: 1}, "y": {Retries: 1}},
	}
	got := messages(joinAll(strictyaml.Check(&r, "cfg", nil)))
	want := []string{
		`cfg.servers[0].mode: must be fast or safe, not "slow"`,
		"cfg.servers[0].wait: must not be negative",
		"cfg.servers[1].name: is required",
		"cfg.servers[1].retries: must be at least 1",
		"cfg.by_name.y.name: is required",
		"cfg.top.name: is required",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	skipped := strictyaml.Check(&r, "", func(t reflect.Type) bool { return t == reflect.TypeFor[server]() })
	if len(skipped) != 0 {
		t.Fatalf("skipped structs checked: %v", skipped)
	}
}

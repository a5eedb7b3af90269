// Package discovery checks the answers of a stand-in of a Google API
// against the API's discovery document, the description google.golang.org/api
// generates its clients from and ships beside them
// (drive/v3/drive-api.json): a stand-in that answers a field Google does
// not describe, or one of another type, has drifted from the API and
// would test the connector against something Google never sends.
//
// Wrap a stand-in's handler with [Check] for each API it serves:
//
//	h := discovery.Check(t, "drive/v3", discovery.Check(t, "sheets/v4", mux))
//
// Each checks the answers to the requests of its API (by the document's
// servicePath and its methods' paths, media uploads included) and
// passes the others through. Only successful JSON answers are checked:
// errors, downloads and exports are not described by a method's
// response schema. Discovery does not say which fields are required, so
// a check cannot fail on a missing field: only on one the description
// lacks, or one of another type.
package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Doc is a discovery document, the parts a check reads.
type Doc struct {
	Name        string             `json:"name"`
	Version     string             `json:"version"`
	ServicePath string             `json:"servicePath"`
	Schemas     map[string]*Schema `json:"schemas"`
	Resources   map[string]*resource
	methods     []*Method
}

type resource struct {
	Methods   map[string]*Method   `json:"methods"`
	Resources map[string]*resource `json:"resources"`
}

// Method is one method of the API.
type Method struct {
	ID         string `json:"id"`
	HTTPMethod string `json:"httpMethod"`
	Path       string `json:"path"`
	FlatPath   string `json:"flatPath"`
	Response   *struct {
		Ref string `json:"$ref"`
	} `json:"response"`
	pattern *regexp.Regexp
}

// Schema is a JSON schema of discovery's dialect.
type Schema struct {
	ID                   string             `json:"id"`
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*Schema `json:"properties"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	Items                *Schema            `json:"items"`
}

var (
	moduleOnce sync.Once
	moduleDir  string
	moduleErr  error
	docsMu     sync.Mutex
	docs       = map[string]*Doc{}
)

// Load reads the discovery document of api ("drive/v3", "sheets/v4",
// "docs/v1", "gmail/v1", "calendar/v3") from the google.golang.org/api
// module the build uses (found with go list), nothing copied.
func Load(api string) (*Doc, error) {
	docsMu.Lock()
	defer docsMu.Unlock()
	if d, ok := docs[api]; ok {
		return d, nil
	}
	moduleOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-json", "google.golang.org/api").Output()
		if err != nil {
			moduleErr = fmt.Errorf("go list -m google.golang.org/api: %w", err)
			return
		}
		var m struct{ Dir string }
		if moduleErr = json.Unmarshal(out, &m); moduleErr == nil && m.Dir == "" {
			moduleErr = fmt.Errorf("google.golang.org/api is not downloaded: go mod download google.golang.org/api")
		}
		moduleDir = m.Dir
	})
	if moduleErr != nil {
		return nil, moduleErr
	}
	name, _, _ := strings.Cut(api, "/")
	b, err := os.ReadFile(filepath.Join(moduleDir, api, name+"-api.json"))
	if err != nil {
		return nil, err
	}
	var d Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", api, err)
	}
	var walk func(map[string]*resource)
	walk = func(rs map[string]*resource) {
		for _, r := range rs {
			for _, m := range r.Methods {
				m.pattern = pathPattern(d.ServicePath, m)
				d.methods = append(d.methods, m)
			}
			walk(r.Resources)
		}
	}
	walk(d.Resources)
	// Literal paths before templated ones: files/generateIds before files/{fileId}.
	slices.SortStableFunc(d.methods, func(a, b *Method) int { return strings.Count(a.Path, "{") - strings.Count(b.Path, "{") })
	docs[api] = &d
	return &d, nil
}

var param = regexp.MustCompile(`\{\+?[^}]+\}`)

// pathPattern matches the request paths of m, with and without /upload/.
func pathPattern(servicePath string, m *Method) *regexp.Regexp {
	p := m.FlatPath
	if p == "" {
		p = m.Path
	}
	var re strings.Builder
	re.WriteString("^/(?:upload/)?" + regexp.QuoteMeta(servicePath))
	last := 0
	for _, loc := range param.FindAllStringIndex(p, -1) {
		re.WriteString(regexp.QuoteMeta(p[last:loc[0]]))
		if strings.HasPrefix(p[loc[0]:], "{+") {
			re.WriteString(`.+`)
		} else {
			re.WriteString(`[^/]+`)
		}
		last = loc[1]
	}
	re.WriteString(regexp.QuoteMeta(p[last:]) + "$")
	return regexp.MustCompile(re.String())
}

// Method finds the method answering an HTTP method on a path (the
// request's escaped path); nil when the API has none.
func (d *Doc) Method(httpMethod, path string) *Method {
	for _, m := range d.methods {
		if m.HTTPMethod == httpMethod && m.pattern.MatchString(path) {
			return m
		}
	}
	return nil
}

// Validate checks a JSON answer of m: every field it holds is one the
// response schema declares, of the declared type (an int64 a string, as
// Google sends it); the problems found, none when it fits.
func (d *Doc) Validate(m *Method, body []byte) []string {
	if m.Response == nil {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var out []string
	d.check(&Schema{Ref: m.Response.Ref}, v, m.Response.Ref, &out)
	return out
}

func (d *Doc) check(s *Schema, v any, at string, out *[]string) {
	if len(*out) > 20 {
		return
	}
	if s.Ref != "" {
		r, ok := d.Schemas[s.Ref]
		if !ok {
			*out = append(*out, at+": the description has no schema "+s.Ref)
			return
		}
		s = r
	}
	bad := func(want string) { *out = append(*out, fmt.Sprintf("%s: %s, want %s", at, kind(v), want)) }
	if v == nil {
		return // null: Google omits, a stand-in may send it
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			bad("an object")
			return
		}
		for k, fv := range obj {
			fs := s.Properties[k]
			if fs == nil {
				fs = s.AdditionalProperties
			}
			if fs == nil {
				*out = append(*out, fmt.Sprintf("%s.%s: a field the description does not have", at, k))
				continue
			}
			d.check(fs, fv, at+"."+k, out)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			bad("an array")
			return
		}
		for i, ev := range arr {
			d.check(s.Items, ev, fmt.Sprintf("%s[%d]", at, i), out)
		}
	case "string":
		if _, ok := v.(string); !ok {
			bad("a string")
		}
	case "integer", "number":
		_, num := v.(json.Number)
		if _, str := v.(string); s.Format == "int64" || s.Format == "uint64" {
			if !str {
				bad("an int64 as a string")
			}
		} else if !num {
			bad("a number")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("a boolean")
		}
	case "any", "":
	}
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// Check wraps h, a stand-in of the API api ("drive/v3"), and fails t
// when h answers a request of that API with a successful JSON body that
// its method's response schema does not describe. Requests of other
// APIs pass through unchecked.
func Check(t testing.TB, api string, h http.Handler) http.Handler {
	t.Helper()
	d, err := Load(api)
	if err != nil {
		t.Fatalf("discovery document of %s: %v", api, err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := d.Method(r.Method, r.URL.EscapedPath())
		if m == nil || r.URL.Query().Get("alt") == "media" {
			h.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w, status: 200}
		h.ServeHTTP(rec, r)
		if rec.Header().Get(faultHeader) != "" || rec.status/100 != 2 || !strings.Contains(rec.Header().Get("Content-Type"), "json") || rec.body.Len() == 0 {
			return
		}
		if problems := d.Validate(m, rec.body.Bytes()); len(problems) > 0 {
			t.Errorf("the stand-in's answer to %s %s (%s) is not what %s describes:\n  %s", r.Method, r.URL.Path, m.ID, api, strings.Join(problems, "\n  "))
		}
	})
}

// faultHeader marks an answer a test sends on purpose in a shape the API
// never has (a malformed body to test the connector's mapping): Check
// leaves it unchecked.
const faultHeader = "X-Standin-Fault"

// Fault marks the answer being written to w as a deliberate fault, which
// Check does not hold against the stand-in; Unfault takes the mark back
// (a fault hook that declined to answer).
func Fault(w http.ResponseWriter) { w.Header().Set(faultHeader, "1") }

// Unfault removes Fault's mark.
func Unfault(w http.ResponseWriter) { w.Header().Del(faultHeader) }

// recorder keeps a copy of what a handler writes.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer (to hijack it).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

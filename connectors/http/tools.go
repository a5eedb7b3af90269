package httpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// callArgs are the arguments of the call tool.
type callArgs struct {
	Method  string            `json:"method,omitempty" jsonschema:"HTTP method: GET (the default), HEAD, OPTIONS, POST, PUT, PATCH or DELETE"`
	Path    string            `json:"path,omitempty" jsonschema:"Path below the connector's base URL, e.g. users/42 (a leading slash is also relative to the base URL); may end in ?query. Absolute URLs and . or .. segments are refused"`
	Query   map[string]string `json:"query,omitempty" jsonschema:"Query parameters added to the URL"`
	Headers map[string]string `json:"headers,omitempty" jsonschema:"Request headers. Authorization, Cookie, the connector's credential header and transport headers such as Host cannot be set"`
	Body    string            `json:"body,omitempty" jsonschema:"Raw request body, sent as given; for a JSON body use json instead. Not together with json"`
	JSON    any               `json:"json,omitempty" jsonschema:"JSON request body, sent with Content-Type: application/json unless a Content-Type header is set. Not together with body"`
}

// The methods the call tool sends.
var methods = map[string]legate.Class{
	http.MethodGet:     legate.ClassRead,
	http.MethodHead:    legate.ClassRead,
	http.MethodOptions: legate.ClassRead,
	http.MethodPost:    legate.ClassWrite,
	http.MethodPut:     legate.ClassWrite,
	http.MethodPatch:   legate.ClassWrite,
	http.MethodDelete:  legate.ClassDestructive,
}

func normMethod(m string) string {
	if m == "" {
		return http.MethodGet
	}
	return strings.ToUpper(m)
}

// classFor classes a call by its method: GET, HEAD and OPTIONS read,
// DELETE is destructive, anything else (unparsable arguments included)
// writes.
func classFor(args json.RawMessage) legate.Class {
	in, err := connectors.DecodeArgs[callArgs](args, nil)
	if err != nil {
		return legate.ClassWrite
	}
	if cl, ok := methods[normMethod(in.Method)]; ok {
		return cl
	}
	return legate.ClassWrite
}

func (c *Connector) callTool() connectors.Tool {
	base := c.cfg.BaseURL
	if c.base != nil {
		base = c.base.Redacted()
	}
	desc := fmt.Sprintf("Send an HTTP request to a path below %s with this connector's credentials. "+
		"GET, HEAD and OPTIONS read; POST, PUT and PATCH write; DELETE is destructive. "+
		"Returns the status, headers and body (text, or body_base64 when binary), cut at %d bytes. "+
		"A 4xx or 5xx answer is an error naming the status.", base, c.cfg.MaxResponseBytes)
	t := connectors.NewTool("call", desc, legate.ClassWrite, c.runCall)
	t.ClassFor = classFor
	return t
}

func (c *Connector) runCall(ctx context.Context, call *connectors.Call, in *callArgs) (*legate.Result, error) {
	if c.base == nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "http: base_url is invalid")
	}
	method := normMethod(in.Method)
	if _, ok := methods[method]; !ok {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "http: method %q is not one of GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE", in.Method)
	}
	target, err := resolve(c.base, in.Path, in.Query)
	if err != nil {
		return nil, err
	}
	if err := checkHeaders(in.Headers, c.cfg.HeaderName); err != nil {
		return nil, err
	}
	var body io.Reader
	jsonBody := rawArg(call.Args, "json")
	switch {
	case jsonBody != nil && in.Body != "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "http: give body or json, not both")
	case jsonBody != nil:
		var buf bytes.Buffer
		if err := json.Compact(&buf, jsonBody); err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "http: json: %v", err)
		}
		body = &buf
	case in.Body != "":
		body = strings.NewReader(in.Body)
	}
	auth, secrets, err := c.auth(ctx, call.Credentials)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), body)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "http: %v", err)
	}
	c.setHeaders(req.Header, in.Headers, auth)
	if jsonBody != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := c.limiter.Wait(ctx); err != nil {
		return nil, transportError(ctx, err, 0)
	}
	resp, err := execute(ctx, c.client, req, c.cfg.MaxResponseBytes, secrets)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: resp}, nil
}

// rawArg returns an argument's JSON text as the client sent it (numbers
// keep their precision), or nil when it is absent or null.
func rawArg(args json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil
	}
	v := bytes.TrimSpace(m[name])
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil
	}
	return v
}

// requestArgs are the arguments of the built-in request tool.
type requestArgs struct {
	URL     string            `json:"url" jsonschema:"Absolute http or https URL to GET; private and internal addresses are refused"`
	Headers map[string]string `json:"headers,omitempty" jsonschema:"Request headers. Authorization, Cookie and transport headers such as Host cannot be set"`
}

// Limits of the built-in request tool.
const (
	BuiltinMaxResponseBytes = 1 << 20
	BuiltinTimeout          = 30 * time.Second
)

// builtinAllowPrivate lets the built-in tool reach private addresses. Only
// this package's tests set it (export_test.go): in the gateway, the tool
// never reaches a private network.
var builtinAllowPrivate bool

// Builtin returns the always-present read-only tool that the gateway
// registers as http.request: a GET of an absolute URL, without
// credentials, bounded to BuiltinMaxResponseBytes, private and internal
// addresses refused. It needs no configuration. Its result is a *Response.
func Builtin() connectors.Tool {
	allowPrivate := builtinAllowPrivate
	client := netguard.NewClient(netguard.Options{AllowPrivate: allowPrivate, Timeout: BuiltinTimeout})
	desc := fmt.Sprintf("Fetch a public URL with GET, without credentials. Returns the status, headers and body "+
		"(text, or body_base64 when binary), cut at %d bytes. Private and internal addresses are refused.", BuiltinMaxResponseBytes)
	return connectors.NewTool("request", desc, legate.ClassRead,
		func(ctx context.Context, call *connectors.Call, in *requestArgs) (*legate.Result, error) {
			u, err := url.Parse(in.URL)
			switch {
			case err != nil:
				return nil, legate.Errorf(legate.CodeInvalidArgument, "http: url: %v", stripURLErr(err))
			case u.Scheme != "http" && u.Scheme != "https":
				return nil, legate.Errorf(legate.CodeInvalidArgument, "http: url must be an absolute http or https URL")
			case u.Hostname() == "":
				return nil, legate.Errorf(legate.CodeInvalidArgument, "http: url has no host")
			case u.User != nil:
				return nil, legate.Errorf(legate.CodeInvalidArgument, "http: url must not hold user info")
			}
			if !allowPrivate {
				if err := netguard.CheckHost(u.Host); err != nil {
					return nil, builtinBlocked(transportError(ctx, err, 0))
				}
			}
			if err := checkHeaders(in.Headers, ""); err != nil {
				return nil, err
			}
			u.Fragment, u.RawFragment = "", ""
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "http: %v", err)
			}
			req.Header.Set("User-Agent", userAgent)
			for k, v := range in.Headers {
				req.Header.Set(k, v)
			}
			resp, err := execute(ctx, client, req, BuiltinMaxResponseBytes, nil)
			if err != nil {
				return nil, builtinBlocked(err)
			}
			return &legate.Result{Structured: resp}, nil
		})
}

package panel

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/internal/jsonindent"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

var funcs = template.FuncMap{
	"pretty":     pretty,
	"prettyText": func(s string) string { return pretty(json.RawMessage(s)) },
	"isJSON":     func(s string) bool { return json.Valid([]byte(s)) },
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return time.Since(t).Round(time.Second).String() + " ago"
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"ms":     millis,
	"diff":   sideBySide,
	"join":   strings.Join,
	"status": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"percent": func(used, limit int64) string {
		if limit <= 0 {
			return "-"
		}
		return strconv.FormatFloat(100*float64(used)/float64(limit), 'f', 0, 64) + "%"
	},
}

// pretty is JSON indented, to be shown in a <pre> that scrolls rather
// than wraps (panel.css): lines break only between members, never within
// a word. What is not a JSON object or array, or would indent to many
// times its size (jsonindent), is returned as it is.
func pretty(b json.RawMessage) string {
	out, _ := jsonindent.Indent(b)
	return string(out)
}

// millis is a latency in milliseconds, the one unit of every latency the
// panel shows, with two decimals below 10 ms, one below 100 ms
// and none above; "-" for none.
func millis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d <= 0:
		return "-"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// problem is the message of an error of the admin API, for a page.
func problem(err error) string {
	var e *admin.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// back sends the browser to path with a message for the page.
func back(w http.ResponseWriter, r *http.Request, path, msg string, err error) {
	q := url.Values{}
	if err != nil {
		q.Set("error", problem(err))
	} else if msg != "" {
		q.Set("msg", msg)
	}
	if strings.Contains(path, "?") {
		path += "&" + q.Encode()
	} else {
		path += "?" + q.Encode()
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// flash is the message and error a redirect left for the page.
func flash(r *http.Request) map[string]any {
	return map[string]any{"Msg": r.URL.Query().Get("msg"), "Error": r.URL.Query().Get("error")}
}

func (p *Panel) inbox(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	var pending, decided struct {
		Approvals []admin.ApprovalView `json:"approvals"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/approvals?state=pending&limit=200", nil, &pending); err != nil {
		data["Error"] = problem(err)
	}
	// Each pending request with its hold (why the policy held it) and,
	// for a quarantined tool, its definitions.
	for i, a := range pending.Approvals {
		var full admin.ApprovalView
		if p.call(r.Context(), s, "GET", "/admin/v1/approvals/"+url.PathEscape(a.ID), nil, &full) == nil {
			pending.Approvals[i] = full
		}
	}
	p.call(r.Context(), s, "GET", "/admin/v1/approvals?limit=50", nil, &decided)
	done := []admin.ApprovalView{}
	for _, a := range decided.Approvals {
		if a.State != store.StatePending {
			done = append(done, a)
		}
	}
	data["Pending"], data["Decided"] = pending.Approvals, done
	data["Fingerprint"] = fingerprint(pending.Approvals)
	p.render(w, "inbox", s, data)
}

// fingerprint names the pending requests shown: the script polls it and
// reloads the page when it changes.
func fingerprint(list []admin.ApprovalView) string {
	ids := make([]string, len(list))
	for i, a := range list {
		ids[i] = a.ID
	}
	return strings.Join(ids, ",")
}

// pending answers the fingerprint of the pending requests, for the script.
func (p *Panel) pending(w http.ResponseWriter, r *http.Request, s *session) {
	var list struct {
		Approvals []admin.ApprovalView `json:"approvals"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/approvals?state=pending&limit=200", nil, &list); err != nil {
		http.Error(w, problem(err), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"fingerprint": fingerprint(list.Approvals)})
}

func (p *Panel) decide(w http.ResponseWriter, r *http.Request, s *session) {
	verb := r.PathValue("verb")
	if verb != "approve" && verb != "deny" {
		http.NotFound(w, r)
		return
	}
	err := p.call(r.Context(), s, "POST", "/admin/v1/approvals/"+url.PathEscape(r.PathValue("id"))+"/"+verb,
		map[string]string{"reason": r.PostFormValue("reason")}, nil)
	done := map[string]string{"approve": "approved", "deny": "denied"}[verb]
	back(w, r, "/inbox", r.PathValue("id")+": "+done, err)
}

func (p *Panel) connectors(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	var list struct {
		Connectors []admin.Connector `json:"connectors"`
	}
	var types struct {
		Types []admin.ConnectorType `json:"types"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/connectors", nil, &list); err != nil {
		data["Error"] = problem(err)
	}
	p.call(r.Context(), s, "GET", "/admin/v1/connector-types", nil, &types)
	data["Connectors"], data["Types"] = list.Connectors, types.Types
	p.render(w, "connectors", s, data)
}

// typeOf finds a connector type by name.
func (p *Panel) typeOf(r *http.Request, s *session, name string) (admin.ConnectorType, bool) {
	var types struct {
		Types []admin.ConnectorType `json:"types"`
	}
	p.call(r.Context(), s, "GET", "/admin/v1/connector-types", nil, &types)
	i := slices.IndexFunc(types.Types, func(t admin.ConnectorType) bool { return t.Name == name })
	if i < 0 {
		return admin.ConnectorType{}, false
	}
	return types.Types[i], true
}

// connectorForm is the install form of a type, made from its config spec.
func (p *Panel) connectorForm(w http.ResponseWriter, r *http.Request, s *session) {
	t, ok := p.typeOf(r, s, r.URL.Query().Get("type"))
	if !ok {
		back(w, r, "/connectors", "", fmt.Errorf("no connector type %q", r.URL.Query().Get("type")))
		return
	}
	data := flash(r)
	data["Type"] = t
	p.render(w, "connector_new", s, data)
}

// addConnector turns the generated form into POST /admin/v1/connectors:
// each field by its kind, each credential a reference or a secret value.
func (p *Panel) addConnector(w http.ResponseWriter, r *http.Request, s *session) {
	t, ok := p.typeOf(r, s, r.PostFormValue("type"))
	if !ok {
		back(w, r, "/connectors", "", fmt.Errorf("no connector type %q", r.PostFormValue("type")))
		return
	}
	in := admin.NewConnector{ID: r.PostFormValue("id"), Type: t.Name, Config: map[string]any{},
		Credentials: map[string]vault.Ref{}, Secrets: map[string]string{}}
	formURL := "/connectors/new?type=" + url.QueryEscape(t.Name)
	for _, f := range t.Fields {
		v, err := fieldValue(f.Kind, r.PostForm["config."+f.Name])
		if err != nil {
			back(w, r, formURL, "", fmt.Errorf("%s: %w", f.Name, err))
			return
		}
		if v != nil {
			in.Config[f.Name] = v
		}
	}
	for _, c := range t.Credentials {
		if secret := r.PostFormValue("secret." + c.Name); secret != "" {
			in.Secrets[c.Name] = secret
			continue
		}
		if ref := strings.TrimSpace(r.PostFormValue("ref." + c.Name)); ref != "" {
			parsed, err := vault.ParseRef(ref)
			if err != nil {
				back(w, r, formURL, "", fmt.Errorf("credential %s: %w", c.Name, err))
				return
			}
			in.Credentials[c.Name] = parsed
		}
	}
	if err := formAccess(r, &in); err != nil {
		back(w, r, formURL, "", err)
		return
	}
	var c admin.Connector
	if err := p.call(r.Context(), s, "POST", "/admin/v1/connectors", in, &c); err != nil {
		back(w, r, formURL, "", err)
		return
	}
	back(w, r, "/connectors", fmt.Sprintf("added connector %s (%s); the server starts it within a second", c.ID, c.Type), nil)
}

// formAccess reads the form's credentials mode and OAuth app into in.
func formAccess(r *http.Request, in *admin.NewConnector) error {
	if mode := r.PostFormValue("credentials_mode"); mode != config.CredentialsShared {
		in.CredentialsMode = mode
	}
	id := strings.TrimSpace(r.PostFormValue("oauth.client_id"))
	if id == "" {
		return nil
	}
	app := &config.ConnectorOAuth{ClientID: id, AuthorizeURL: strings.TrimSpace(r.PostFormValue("oauth.authorize_url")),
		TokenURL: strings.TrimSpace(r.PostFormValue("oauth.token_url"))}
	for _, sc := range strings.Split(r.PostFormValue("oauth.scopes"), ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			app.Scopes = append(app.Scopes, sc)
		}
	}
	if secret := r.PostFormValue("secret.oauth.client_secret"); secret != "" {
		in.Secrets[admin.SecretOAuthClient] = secret
	} else if ref := strings.TrimSpace(r.PostFormValue("ref.oauth.client_secret")); ref != "" {
		parsed, err := vault.ParseRef(ref)
		if err != nil {
			return fmt.Errorf("oauth client secret: %w", err)
		}
		app.ClientSecret = &parsed
	}
	in.OAuth = app
	return nil
}

// scalar reads a value of a map field as YAML would: a number or a
// boolean when it is one (rate_limit: per_second=10), else the text.
func scalar(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
		return b
	}
	return v
}

// fieldValue reads a form field of a kind; nil when left empty.
func fieldValue(kind string, vals []string) (any, error) {
	v := ""
	if len(vals) > 0 {
		v = strings.TrimSpace(vals[len(vals)-1])
	}
	if kind == "bool" {
		return slices.Contains(vals, "true"), nil
	}
	if v == "" {
		return nil, nil
	}
	switch kind {
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want a whole number")
		}
		return n, nil
	case "list":
		var out []string
		for l := range strings.Lines(v) {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out, nil
	case "map":
		out := map[string]any{}
		for l := range strings.Lines(v) {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			k, val, ok := strings.Cut(l, "=")
			if !ok {
				return nil, fmt.Errorf("want KEY=VALUE lines")
			}
			out[strings.TrimSpace(k)] = scalar(strings.TrimSpace(val))
		}
		return out, nil
	}
	return v, nil
}

func (p *Panel) testConnector(w http.ResponseWriter, r *http.Request, s *session) {
	var t admin.ConnectorTest
	err := p.call(r.Context(), s, "POST", "/admin/v1/connectors/"+url.PathEscape(r.PathValue("id"))+"/test", nil, &t)
	msg := "test of " + t.ID + ": ok"
	if err == nil && !t.OK {
		err = errors.New("test of " + t.ID + " failed: " + t.Error)
	}
	back(w, r, "/connectors", msg, err)
}

func (p *Panel) upstreams(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	var list struct {
		Upstreams []admin.UpstreamStatus `json:"upstreams"`
	}
	var q struct {
		Quarantined []admin.QuarantinedTool `json:"quarantined"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/upstreams", nil, &list); err != nil {
		data["Error"] = problem(err)
	}
	p.call(r.Context(), s, "GET", "/admin/v1/quarantine", nil, &q)
	data["Upstreams"], data["Quarantined"] = list.Upstreams, q.Quarantined
	p.render(w, "upstreams", s, data)
}

// addUpstream turns the form into POST /admin/v1/upstreams, as `legate
// upstream add ID (--url URL | -- PROGRAM [ARG...])` does: an id, and a
// URL or a command of one argument a line, and the tenant owning it.
func (p *Panel) addUpstream(w http.ResponseWriter, r *http.Request, s *session) {
	entry := map[string]any{"id": strings.TrimSpace(r.PostFormValue("id"))}
	if u := strings.TrimSpace(r.PostFormValue("url")); u != "" {
		entry["url"] = u
	}
	var command []string
	for line := range strings.Lines(r.PostFormValue("command")) {
		if arg := strings.TrimRight(line, "\r\n"); strings.TrimSpace(arg) != "" {
			command = append(command, arg)
		}
	}
	if len(command) > 0 {
		entry["command"] = command
	}
	if t := strings.TrimSpace(r.PostFormValue("tenant")); t != "" {
		entry["tenant"] = t
	}
	var res struct {
		Added string `json:"added"`
	}
	if err := p.call(r.Context(), s, "POST", "/admin/v1/upstreams", entry, &res); err != nil {
		back(w, r, "/upstreams", "", err)
		return
	}
	back(w, r, "/upstreams", "added upstream "+res.Added+"; the server connects to it within a second", nil)
}

func (p *Panel) upstreamAction(w http.ResponseWriter, r *http.Request, s *session) {
	id, verb := r.PathValue("id"), r.PathValue("verb")
	switch verb {
	case "refresh":
		var res admin.Refresh
		err := p.call(r.Context(), s, "POST", "/admin/v1/upstreams/"+url.PathEscape(id)+"/refresh", nil, &res)
		back(w, r, "/upstreams", fmt.Sprintf("refreshed %s: %d tools", id, res.Tools), err)
	case "accept":
		body := map[string][]string{}
		if t := r.PostFormValue("tool"); t != "" {
			body["tools"] = []string{t}
		}
		var res struct {
			Accepted []string `json:"accepted"`
		}
		err := p.call(r.Context(), s, "POST", "/admin/v1/upstreams/"+url.PathEscape(id)+"/accept", body, &res)
		back(w, r, "/upstreams", fmt.Sprintf("accepted %s of %s", strings.Join(res.Accepted, ", "), id), err)
	default:
		http.NotFound(w, r)
	}
}

// connection is one row of GET /admin/v1/connections.
type connection struct {
	Instance    string    `json:"instance"`
	Principal   string    `json:"principal"`
	Tenant      string    `json:"tenant"`
	Status      string    `json:"status"`
	Expiry      time.Time `json:"expiry"`
	ConnectedAt time.Time `json:"connected_at"`
}

// connections lists what the signed-in principal may connect, with a
// button each, and people's connections to instances with per-user
// credentials (never their tokens), the signed-in principal's first.
func (p *Panel) connections(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	var list struct {
		Connections []connection              `json:"connections"`
		Connectable []connections.Connectable `json:"connectable"`
		// Principal is who connects here: the logged-in token's principal,
		// or without authentication the gateway's.
		Principal string `json:"principal"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/connections", nil, &list); err != nil {
		data["Error"] = problem(err)
	}
	var mine, others []connection
	for _, c := range list.Connections {
		if c.Principal == cmp.Or(list.Principal, s.me.Name) {
			mine = append(mine, c)
		} else {
			others = append(others, c)
		}
	}
	data["Mine"], data["Others"], data["Connectable"] = mine, others, list.Connectable
	p.render(w, "connections", s, data)
}

// revokeConnection is DELETE /admin/v1/connections/{instance}.
func (p *Panel) revokeConnection(w http.ResponseWriter, r *http.Request, s *session) {
	inst, who := r.PathValue("instance"), r.PostFormValue("principal")
	q := url.Values{"principal": {who}, "tenant": {r.PostFormValue("tenant")}}
	err := p.call(r.Context(), s, "DELETE", "/admin/v1/connections/"+url.PathEscape(inst)+"?"+q.Encode(), nil, nil)
	back(w, r, "/connections", fmt.Sprintf("revoked the connection of %s to %s", who, inst), err)
}

// connect is POST /admin/v1/connections/{instance}/connect: the browser
// goes on to the provider's consent URL it answers, which comes back to
// the callback on the origin the browser used (the panel's, unless
// Legate's public URL is configured) and completes only in the browser
// that keeps the cookie the answer sets, passed on here. When the
// callback is on another host, whose cookies the panel cannot set, the
// browser goes to Legate's page on that host instead, which starts the
// consent there.
func (p *Panel) connect(w http.ResponseWriter, r *http.Request, s *session) {
	req, err := http.NewRequestWithContext(r.Context(), "POST", "/admin/v1/connections/"+url.PathEscape(r.PathValue("instance"))+"/connect", nil)
	if err != nil {
		back(w, r, "/connections", "", err)
		return
	}
	req.Host, req.TLS = r.Host, r.TLS
	var res struct {
		URL        string `json:"url"`
		ConnectURL string `json:"connect_url"`
	}
	h, err := p.sendHeader(req, s, &res)
	if err != nil {
		back(w, r, "/connections", "", err)
		return
	}
	next := res.URL
	if callbackHost(res.URL) == hostname(r.Host) {
		for _, c := range h.Values("Set-Cookie") {
			w.Header().Add("Set-Cookie", c)
		}
	} else {
		next = res.ConnectURL
	}
	// Not a redirect: a browser checks the redirect of a form against the
	// form-action of the page's Content-Security-Policy, which allows the
	// panel's own origin alone. A refresh is a navigation of its own.
	w.Header().Set("Refresh", "0; url="+next)
	p.render(w, "consent", s, map[string]any{"Instance": r.PathValue("instance"), "URL": next})
}

// callbackHost is the host name a consent URL's redirect_uri names.
func callbackHost(consent string) string {
	u, err := url.Parse(consent)
	if err != nil {
		return ""
	}
	cb, err := url.Parse(u.Query().Get("redirect_uri"))
	if err != nil {
		return ""
	}
	return cb.Hostname()
}

// hostname is the name of a Host header, without its port: cookies are
// kept by name, whatever the port.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

// callback ends a consent the provider sent back to the panel's origin.
// It answers a page rather than the Connections page itself: the session
// cookie (SameSite=Strict) does not come with a redirect from another
// site, so the page links to the Connections page, whose request does
// carry it.
func (p *Panel) callback(w http.ResponseWriter, r *http.Request) {
	msg, err := p.opts.Callback(w, r)
	q, data, status := url.Values{"msg": {msg}}, map[string]any{"Who": msg}, http.StatusOK
	if err != nil {
		q, data, status = url.Values{"error": {problem(err)}}, map[string]any{"Error": problem(err)}, http.StatusBadRequest
	}
	data["Back"] = "/connections?" + q.Encode()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	p.render(w, "connected", p.session(r), data)
}

func (p *Panel) tools(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	q := r.URL.Query()
	path := "/admin/v1/tools"
	as := url.Values{}
	for _, k := range []string{"principal", "tenant", "profile"} {
		if v := q.Get(k); v != "" {
			as.Set(k, v)
		}
	}
	if len(as) > 0 {
		path += "?" + as.Encode()
	}
	var list struct {
		Tools []admin.Tool `json:"tools"`
	}
	if err := p.call(r.Context(), s, "GET", path, nil, &list); err != nil {
		data["Error"] = problem(err)
	}
	data["Tools"], data["As"], data["Principal"], data["Tenant"], data["Profile"] = list.Tools, len(as) > 0, q.Get("principal"), q.Get("tenant"), q.Get("profile")
	var st admin.Status // the URL of each profile's view; the page goes on without
	p.call(r.Context(), s, "GET", "/admin/v1/status", nil, &st)
	data["Profiles"] = st.Profiles
	p.render(w, "tools", s, data)
}

func (p *Panel) audit(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	q := r.URL.Query()
	args := url.Values{}
	for _, k := range []string{"tool", "principal", "since", "limit", "cursor"} {
		if v := q.Get(k); v != "" {
			args.Set(k, v)
		}
	}
	if id, err := strconv.ParseInt(q.Get("id"), 10, 64); err == nil && id > 0 {
		args = url.Values{"cursor": {strconv.FormatInt(id-1, 10)}, "limit": {"1"}}
	}
	var page struct {
		Rows []store.AuditRow `json:"rows"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/audit?"+args.Encode(), nil, &page); err != nil {
		data["Error"] = problem(err)
	}
	slices.Reverse(page.Rows) // newest first
	data["Rows"], data["Tool"], data["Principal"], data["Since"] = page.Rows, q.Get("tool"), q.Get("principal"), q.Get("since")
	if q.Get("id") != "" && len(page.Rows) == 1 {
		row, _ := jsonindent.Marshal(page.Rows[0])
		data["Record"] = string(row)
	}
	p.render(w, "audit", s, data)
}

// budgets shows each budget's use in its current window against its limit.
func (p *Panel) budgets(w http.ResponseWriter, r *http.Request, s *session) {
	data := flash(r)
	var list struct {
		Budgets []quota.Usage `json:"budgets"`
	}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/budgets", nil, &list); err != nil {
		data["Error"] = problem(err)
	}
	data["Budgets"] = list.Budgets
	p.render(w, "budgets", s, data)
}

// diffLine is one row of a side-by-side diff.
type diffLine struct {
	Left, Right string
	Changed     bool
}

// sideBySide sets the lines of two definitions beside each other, marking
// the rows whose lines differ.
func sideBySide(a, b json.RawMessage) []diffLine {
	left, right := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	if len(a) == 0 {
		left = []string{"(never accepted)"}
	}
	n := max(len(left), len(right))
	out := make([]diffLine, n)
	for i := range n {
		var l, rt string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			rt = right[i]
		}
		out[i] = diffLine{Left: l, Right: rt, Changed: l != rt}
	}
	return out
}

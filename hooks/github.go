//go:build !custom || connector_github

package hooks

import (
	"encoding/json"
	"errors"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate/store"
)

func init() {
	providers["github"] = provider{credential: "webhook_secret", verify: verifyGitHub, read: readGitHub}
}

// GitHub signs each delivery with the webhook's secret:
// X-Hub-Signature-256 is sha256= and the hex HMAC-SHA256 of the body,
// checked by go-github. It carries no timestamp; a replay is a delivery
// already stored (X-GitHub-Delivery).
func verifyGitHub(d *delivery, secret string) error {
	sig := d.header.Get(github.SHA256SignatureHeader)
	if sig == "" {
		return refuse(ReasonSignature, errNoSignature)
	}
	if err := github.ValidateSignature(sig, d.body, []byte(secret)); err != nil {
		return refuse(ReasonSignature, err)
	}
	return nil
}

// githubObjects are the payload members whose html_url names what an
// event is about, in the order looked for.
var githubObjects = []string{"comment", "review", "issue", "pull_request", "discussion", "release", "check_run", "workflow_run", "deployment"}

// readGitHub reads a delivery: its kind is X-GitHub-Event and the
// payload's action (issues.opened), its id X-GitHub-Delivery.
func readGitHub(d *delivery) (*store.Event, *answer, error) {
	name, id := d.header.Get(github.EventTypeHeader), d.header.Get(github.DeliveryIDHeader)
	if name == "" || id == "" {
		return nil, nil, refuse(ReasonMalformed, errors.New("no X-GitHub-Event or X-GitHub-Delivery header"))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(d.body, &m); err != nil {
		return nil, nil, refuse(ReasonMalformed, err)
	}
	ev := &store.Event{ProviderID: id, Kind: name, Time: d.now, Payload: d.body, Actor: path(m, "sender", "login")}
	action := field(m, "action")
	if action != "" {
		ev.Kind = name + "." + action
	}
	for _, o := range githubObjects {
		if u := path(m, o, "html_url"); u != "" {
			ev.Object = u
			break
		}
	}
	if ev.Object == "" {
		ev.Object = path(m, "head_commit", "url")
	}
	if ev.Object == "" {
		ev.Object = path(m, "repository", "html_url")
	}
	ev.Meta = meta("event", name, "action", action, "repository", path(m, "repository", "full_name"),
		"hook_id", d.header.Get("X-GitHub-Hook-ID"), "installation", path(m, "installation", "id"))
	return ev, nil, nil
}

//go:build !custom || connector_notion

package hooks

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

func init() {
	providers["notion"] = provider{credential: "webhook_verification_token", handshake: notionHandshake, verify: verifyNotion, read: readNotion}
}

// Notion signs each event with the subscription's verification token:
// X-Notion-Signature is sha256= and the hex HMAC-SHA256 of the body. No
// library Legate uses has the check (jomei/notionapi has no webhooks),
// so it is written here. The events carry their own time, but the
// signature does not cover a timestamp header; a replay is an event id
// already stored.
func verifyNotion(d *delivery, secret string) error {
	sig, ok := strings.CutPrefix(d.header.Get("X-Notion-Signature"), "sha256=")
	if !ok {
		return refuse(ReasonSignature, errNoSignature)
	}
	if !equalSig(sig, hmacHex(secret, d.body)) {
		return refuse(ReasonSignature, errors.New("signature does not match"))
	}
	return nil
}

// notionHandshake answers the one request Notion sends unsigned: when a
// subscription is created, a body holding only verification_token, the
// token Notion will sign with. With the instance's credential set, the
// token must be it; without one yet (the reference cannot be read: the
// token is not known before this request), it is accepted and handed to
// the Handler's Verification function, which keeps it for the operator.
func notionHandshake(d *delivery, secret string) (*answer, bool, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(d.body, &m) != nil || len(m) != 1 {
		return nil, false, nil
	}
	token := field(m, "verification_token")
	if token == "" {
		return nil, false, nil
	}
	if secret != "" && subtle.ConstantTimeCompare([]byte(token), []byte(secret)) != 1 {
		return nil, true, refuse(ReasonSignature, errors.New("verification token is not the instance's"))
	}
	return &answer{body: map[string]bool{"ok": true}}, true, nil
}

// notionKinds are the normalised kinds of Notion's event types; others
// keep Notion's own type.
var notionKinds = map[string]string{
	"page.content_updated":        "page.updated",
	"page.properties_updated":     "page.updated",
	"database.schema_updated":     "database.updated",
	"database.content_updated":    "database.updated",
	"data_source.schema_updated":  "data_source.updated",
	"data_source.content_updated": "data_source.updated",
}

// readNotion reads an event: its id, type, entity and first author.
func readNotion(d *delivery) (*store.Event, *answer, error) {
	var e struct {
		ID             string `json:"id"`
		Timestamp      string `json:"timestamp"`
		WorkspaceID    string `json:"workspace_id"`
		SubscriptionID string `json:"subscription_id"`
		IntegrationID  string `json:"integration_id"`
		Type           string `json:"type"`
		Authors        []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"authors"`
		Entity struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"entity"`
	}
	if err := json.Unmarshal(d.body, &e); err != nil {
		return nil, nil, refuse(ReasonMalformed, err)
	}
	if e.ID == "" || e.Type == "" {
		return nil, nil, refuse(ReasonMalformed, fmt.Errorf("no event id or type"))
	}
	ev := &store.Event{ProviderID: e.ID, Kind: e.Type, Object: e.Entity.ID, Time: d.now, Payload: d.body}
	if k, ok := notionKinds[e.Type]; ok {
		ev.Kind = k
	}
	if t, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
		ev.Time = t
	}
	if len(e.Authors) > 0 {
		ev.Actor = e.Authors[0].ID
	}
	ev.Meta = meta("type", e.Type, "entity_type", e.Entity.Type, "workspace_id", e.WorkspaceID, "subscription_id", e.SubscriptionID)
	return ev, nil, nil
}

//go:build !custom || connector_slack

package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

func init() {
	providers["slack"] = provider{credential: "webhook_secret", verify: verifySlack, read: readSlack}
}

// Slack signs each request (Events API, slash commands, interactivity)
// with the app's signing secret: X-Slack-Signature is v0= and the hex
// HMAC-SHA256 of "v0:" + X-Slack-Request-Timestamp + ":" + body. The
// timestamp is checked against the receiver's clock first. The HMAC is
// computed here rather than by slack-go's slack.NewSecretsVerifier, which
// does the same but reads the wall clock itself: a receiver whose clock is
// given (tests, and Slack's published example, signed in 2018) could not
// use it; hooks_test checks the two agree.
func verifySlack(d *delivery, secret string) error {
	sig, ts := d.header.Get("X-Slack-Signature"), d.header.Get("X-Slack-Request-Timestamp")
	if sig == "" || ts == "" {
		return refuse(ReasonSignature, errNoSignature)
	}
	if err := fresh(ts, d.now); err != nil {
		return err
	}
	hexSig, ok := strings.CutPrefix(sig, "v0=")
	if !ok || !equalSig(hexSig, hmacHex(secret, []byte("v0:"+ts+":"), d.body)) {
		return refuse(ReasonSignature, fmt.Errorf("signature does not match"))
	}
	return nil
}

// slackKinds are the normalised kinds of Slack's event types (and message
// subtypes); others keep Slack's own type.
var slackKinds = map[string]string{
	"message":                 "message.posted",
	"message/message_changed": "message.edited",
	"message/message_deleted": "message.deleted",
	"app_mention":             "message.mentioned",
	"reaction_added":          "reaction.added",
	"reaction_removed":        "reaction.removed",
	"channel_created":         "channel.created",
	"channel_archive":         "channel.archived",
	"channel_rename":          "channel.renamed",
	"member_joined_channel":   "channel.member_joined",
	"member_left_channel":     "channel.member_left",
	"file_shared":             "file.shared",
	"team_join":               "user.joined",
}

// readSlack reads an Events API callback (JSON), or a slash command or
// interaction (form-encoded), and answers url_verification.
func readSlack(d *delivery) (*store.Event, *answer, error) {
	body := strings.TrimSpace(string(d.body))
	if !strings.HasPrefix(body, "{") {
		return readSlackForm(d)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(d.body, &m); err != nil {
		return nil, nil, refuse(ReasonMalformed, err)
	}
	typ := field(m, "type")
	if typ == "url_verification" {
		return nil, &answer{body: map[string]string{"challenge": field(m, "challenge")}}, nil
	}
	delete(m, "token") // the app's legacy verification token
	payload, _ := json.Marshal(m)
	ev := &store.Event{ProviderID: field(m, "event_id"), Kind: typ, Payload: payload, Time: d.now}
	if t, err := strconv.ParseInt(field(m, "event_time"), 10, 64); err == nil {
		ev.Time = time.Unix(t, 0)
	}
	inner := object(m, "event")
	if typ == "event_callback" && inner != nil {
		it, sub := field(inner, "type"), field(inner, "subtype")
		ev.Kind = it
		if k, ok := slackKinds[it+"/"+sub]; ok {
			ev.Kind = k
		} else if k, ok := slackKinds[it]; ok && (sub == "" || it != "message") {
			ev.Kind = k
		} else if sub != "" {
			ev.Kind = it + "." + sub
		}
		ev.Actor = field(inner, "user")
		channel, ts := field(inner, "channel"), field(inner, "ts")
		if item := object(inner, "item"); item != nil { // reactions
			channel, ts = field(item, "channel"), field(item, "ts")
		}
		ev.Object = strings.Trim(channel+"/"+ts, "/")
		ev.Meta = meta("team_id", field(m, "team_id"), "api_app_id", field(m, "api_app_id"), "type", it, "subtype", sub, "channel_type", field(inner, "channel_type"))
	}
	if ev.ProviderID == "" {
		ev.ProviderID = bodyID(d.body)
	}
	return ev, nil, nil
}

// readSlackForm reads a slash command, or an interaction (its JSON in the
// payload field).
func readSlackForm(d *delivery) (*store.Event, *answer, error) {
	q, err := url.ParseQuery(string(d.body))
	if err != nil {
		return nil, nil, refuse(ReasonMalformed, err)
	}
	q.Del("token")
	ev := &store.Event{Time: d.now}
	if p := q.Get("payload"); p != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			return nil, nil, refuse(ReasonMalformed, err)
		}
		delete(m, "token")
		clean, _ := json.Marshal(m)
		q.Set("payload", string(clean))
		ev.Kind = "interaction." + field(m, "type")
		ev.ProviderID = field(m, "trigger_id")
		ev.Actor = path(m, "user", "id")
		ev.Object = path(m, "channel", "id")
		ev.Meta = meta("team_id", path(m, "team", "id"), "type", field(m, "type"), "callback_id", field(m, "callback_id"))
	} else if cmd := q.Get("command"); cmd != "" {
		ev.Kind = "command.invoked"
		ev.ProviderID = q.Get("trigger_id")
		ev.Actor, ev.Object = q.Get("user_id"), q.Get("channel_id")
		ev.Meta = meta("team_id", q.Get("team_id"), "command", cmd, "channel_name", q.Get("channel_name"))
	} else {
		return nil, nil, refuse(ReasonMalformed, fmt.Errorf("neither a command nor an interaction"))
	}
	if ev.ProviderID == "" {
		ev.ProviderID = bodyID(d.body)
	}
	ev.Payload = []byte(q.Encode())
	return ev, nil, nil
}

// bodyID identifies a delivery without an id of its own by its body: a
// retry of it is the same body.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:16])
}

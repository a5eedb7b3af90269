package slack_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate/connectors"
)

// Slack publishes no OpenAPI description of the Web API; slack-go's
// response types are what the connector decodes. These are the shapes of
// the answers of the methods the connector calls, built from slack-go's
// exported types as its own (unexported) response types are.
var answerShapes = map[string]func() any{
	"auth.test": func() any {
		return &struct {
			slack.SlackResponse
			slack.AuthTestResponse
		}{}
	},
	"conversations.list":    func() any { return &channelsAnswer{} },
	"users.conversations":   func() any { return &channelsAnswer{} },
	"conversations.history": func() any { return &slack.GetConversationHistoryResponse{} },
	"conversations.replies": func() any { return &slack.GetConversationHistoryResponse{} },
	"chat.postMessage": func() any {
		return &struct {
			slack.SlackResponse
			Channel   string        `json:"channel"`
			Timestamp string        `json:"ts"`
			Message   slack.Message `json:"message"`
		}{}
	},
	"users.list": func() any {
		return &struct {
			slack.SlackResponse
			Members []slack.User `json:"members"`
		}{}
	},
	"users.info":          func() any { return &userAnswer{} },
	"users.lookupByEmail": func() any { return &userAnswer{} },
	"conversations.open": func() any {
		return &struct {
			slack.SlackResponse
			Channel     slack.Channel `json:"channel"`
			NoOp        bool          `json:"no_op"`
			AlreadyOpen bool          `json:"already_open"`
		}{}
	},
	"conversations.info":     func() any { return &channelAnswer{} },
	"conversations.setTopic": func() any { return &channelAnswer{} },
	"search.messages": func() any {
		return &struct {
			slack.SlackResponse
			Query    string               `json:"query"`
			Messages slack.SearchMessages `json:"messages"`
		}{}
	},
	"reactions.add":               func() any { return &slack.SlackResponse{} },
	"reactions.remove":            func() any { return &slack.SlackResponse{} },
	"chat.deleteScheduledMessage": func() any { return &slack.SlackResponse{} },
	"chat.scheduleMessage": func() any {
		return &struct {
			slack.SlackResponse
			Channel            string        `json:"channel"`
			ScheduledMessageID string        `json:"scheduled_message_id"`
			PostAt             string        `json:"post_at"`
			Message            slack.Message `json:"message"`
		}{}
	},
	"chat.scheduledMessages.list": func() any {
		return &struct {
			slack.SlackResponse
			ScheduledMessages []slack.ScheduledMessage `json:"scheduled_messages"`
		}{}
	},
	"files.getUploadURLExternal":   func() any { return &slack.GetUploadURLExternalResponse{} },
	"files.completeUploadExternal": func() any { return &slack.CompleteUploadExternalResponse{} },
	"files.list": func() any {
		return &struct {
			slack.SlackResponse
			Files  []slack.File `json:"files"`
			Paging slack.Paging `json:"paging"`
		}{}
	},
	"files.info": func() any {
		return &struct {
			slack.SlackResponse
			File     slack.File      `json:"file"`
			Comments []slack.Comment `json:"comments"`
			Paging   slack.Paging    `json:"paging"`
		}{}
	},
}

type channelsAnswer struct {
	slack.SlackResponse
	Channels []slack.Channel `json:"channels"`
}

type channelAnswer struct {
	slack.SlackResponse
	Channel slack.Channel `json:"channel"`
}

type userAnswer struct {
	slack.SlackResponse
	User slack.User `json:"user"`
}

// fitsShape decodes body into method's shape, refusing a field the shape
// does not have.
func fitsShape(method string, body []byte) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	return d.Decode(answerShapes[method]())
}

// Every answer the stand-in gave while every tool ran decodes into
// slack-go's types with no field left over, and every method it answered
// has a shape: a stand-in drifting from Slack's shapes fails here.
func TestStandinAnswersHaveSlacksShapes(t *testing.T) {
	f := newFixture(t, 3, "")
	for _, tool := range f.in.c.(connectors.ToolCatalog).ToolCatalog() {
		if _, err := f.run(t, f.in, tool.Name, 1, "op-drift-"+tool.Name); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
	}
	f.s.mu.Lock()
	answers := f.s.answers
	f.s.mu.Unlock()
	methods := slices.Sorted(func(yield func(string) bool) {
		for m := range answers {
			if !yield(m) {
				return
			}
		}
	})
	for _, method := range methods {
		if answerShapes[method] == nil {
			t.Errorf("%s: no shape to check its answers against", method)
			continue
		}
		for _, body := range answers[method] {
			if err := fitsShape(method, body); err != nil {
				t.Errorf("%s answered %s: %v", method, body, err)
			}
		}
	}
	if len(methods) < 18 {
		t.Errorf("only %d methods answered: %v", len(methods), methods)
	}
}

// The check fails on a field Slack's shape does not have, as a stand-in
// answering {"channel": {...}, "topic_value": ...} would.
func TestShapeCheckRefusesADriftedAnswer(t *testing.T) {
	if err := fitsShape("conversations.setTopic", []byte(`{"ok":true,"channel":{"id":"C1","topic_value":"x"}}`)); err == nil {
		t.Fatal("an unknown field passed")
	}
	if err := fitsShape("conversations.setTopic", []byte(`{"ok":true,"channel":{"id":"C1","topic":{"value":"x"}}}`)); err != nil {
		t.Fatalf("Slack's own shape: %v", err)
	}
}

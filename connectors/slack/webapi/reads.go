// Package webapi makes the slack connector's reads of a page of channels
// or of messages, its most frequent answers and its largest, as slack-go's
// methods of the same names make them, decoding faster; and finds, by
// those reads, a post an earlier attempt may have made.
package webapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"
	"github.com/slack-go/slack"
)

// Reads makes the Web API reads of a page of channels or of messages as
// slack-go's methods of the same names make them: the same form, and the
// same errors
// (*slack.RateLimitedError, slack.StatusCodeError,
// slack.SlackErrorResponse). Each answer is decoded into slack-go's types
// by segmentio/encoding/json (which the go-sdk links already) instead of
// encoding/json: a page of 20 channels took 4× as long to decode that way
// as the rest of the read in Legate put together took
// (BenchmarkDecodeChannels). TestReadsMatchSlackGo holds the two to the
// same requests, results and errors.
type Reads struct {
	http  *http.Client
	url   string // the Web API's base URL, ending in /
	token string
}

// New returns the reads with token on hc, of the Web API at baseURL
// (ending in /).
func New(hc *http.Client, baseURL, token string) Reads {
	return Reads{http: hc, url: baseURL, token: token}
}

// GetConversationsContext is slack-go's method of the same name.
func (r Reads) GetConversationsContext(ctx context.Context, p *slack.GetConversationsParameters) ([]slack.Channel, string, error) {
	values := url.Values{"token": {r.token}}
	if p.Cursor != "" {
		values.Add("cursor", p.Cursor)
	}
	if p.Limit != 0 {
		values.Add("limit", strconv.Itoa(p.Limit))
	}
	if p.Types != nil {
		values.Add("types", strings.Join(p.Types, ","))
	}
	if p.ExcludeArchived {
		values.Add("exclude_archived", "true")
	}
	if p.TeamID != "" {
		values.Add("team_id", p.TeamID)
	}
	var out struct {
		slack.SlackResponse
		Channels []slack.Channel `json:"channels"`
		Meta     struct {
			NextCursor string `json:"next_cursor"`
		} `json:"response_metadata"`
	}
	if err := r.post(ctx, "conversations.list", values, &out); err != nil {
		return nil, "", err
	}
	return out.Channels, out.Meta.NextCursor, out.Err()
}

// GetConversationHistoryContext is slack-go's method of the same name.
func (r Reads) GetConversationHistoryContext(ctx context.Context, p *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error) {
	values := r.messages(url.Values{"channel": {p.ChannelID}}, p.Cursor, p.Latest, p.Oldest, p.Limit, p.Inclusive, p.IncludeAllMetadata)
	out := &slack.GetConversationHistoryResponse{}
	if err := r.post(ctx, "conversations.history", values, out); err != nil {
		return nil, err
	}
	return out, out.Err()
}

// GetConversationRepliesContext is slack-go's method of the same name.
func (r Reads) GetConversationRepliesContext(ctx context.Context, p *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error) {
	values := r.messages(url.Values{"channel": {p.ChannelID}, "ts": {p.Timestamp}}, p.Cursor, p.Latest, p.Oldest, p.Limit, p.Inclusive, p.IncludeAllMetadata)
	var out struct {
		slack.SlackResponse
		HasMore bool `json:"has_more"`
		Meta    struct {
			NextCursor string `json:"next_cursor"`
		} `json:"response_metadata"`
		Messages []slack.Message `json:"messages"`
	}
	if err := r.post(ctx, "conversations.replies", values, &out); err != nil {
		return nil, false, "", err
	}
	return out.Messages, out.HasMore, out.Meta.NextCursor, out.Err()
}

// messages adds to values the token and the options of a page of
// messages, as slack-go's history and replies methods send them.
func (r Reads) messages(values url.Values, cursor, latest, oldest string, limit int, inclusive, metadata bool) url.Values {
	values.Set("token", r.token)
	if cursor != "" {
		values.Set("cursor", cursor)
	}
	if latest != "" {
		values.Set("latest", latest)
	}
	if limit != 0 {
		values.Set("limit", strconv.Itoa(limit))
	}
	if oldest != "" {
		values.Set("oldest", oldest)
	}
	values.Set("inclusive", flag(inclusive))
	values.Set("include_all_metadata", flag(metadata))
	return values
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// post sends method its form and decodes the answer into out, with
// slack-go's errors for a refusal by rate and for a status other than 200
// (whose body, often HTML, is not read).
func (r Reads) post(ctx context.Context, method string, values url.Values, out any) error {
	body := values.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+method, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "" {
		secs, err := strconv.ParseInt(resp.Header.Get("Retry-After"), 10, 64)
		if err != nil {
			return err
		}
		return &slack.RateLimitedError{RetryAfter: time.Duration(secs) * time.Second}
	}
	if resp.StatusCode != http.StatusOK {
		return slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

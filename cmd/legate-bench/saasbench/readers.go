package saasbench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/go-github/v84/github"
	"github.com/jomei/notionapi"
	"github.com/slack-go/slack"
	"github.com/stripe/stripe-go/v82"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

// The credentials the stand-in takes.
const (
	token        = "xoxb-bench-token" // Slack's bot token, GitHub's token
	notionToken  = "ntn_bench4f2a9c1e7b3d"
	stripeKey    = "sk_test_bench51Hd8Kq2eZvKYlo2C"
	clientID     = "1234567890-bench.apps.googleusercontent.com"
	clientSecret = "GOCSPX-bench-secret"
	refreshToken = "1//bench-refresh-token"
	accessToken  = "ya29.bench-access-token" // what the token endpoint gives for the refresh token
)

// The objects read.
const (
	spreadsheet = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	sheetWindow = "Sheet1!A1:E101" // Sheet1!A1:E, a page of 100 rows and one more, as the connector asks
	customer    = "cus_QXg1o8vcGmoR32"
	// customerEmail is its email, by which Stripe's anchor lists it.
	customerEmail = "jenny.rosen@example.com"
)

// perCall wraps a read that makes its client at each call.
func perCall(read func(ctx context.Context, base string, hc *http.Client) error) func(context.Context, string, *http.Client) (func(context.Context) error, error) {
	return func(_ context.Context, base string, hc *http.Client) (func(context.Context) error, error) {
		return func(ctx context.Context) error { return read(ctx, base, hc) }, nil
	}
}

var readers = []reader{
	{
		name: "slack", what: "slack.list_channels (20 channels)",
		config: "{api_url: \"%s/api/\", allow_private_networks: true}", secrets: map[string]string{"bot_token": token},
		tool: "slack__list_channels", args: map[string]any{"limit": 20}, want: "team-19",
		raw: benchkit.RawRead{Method: "POST", URL: "/api/conversations.list", Body: "exclude_archived=true&limit=20&types=public_channel",
			Header: map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/x-www-form-urlencoded"}},
		open: perCall(func(ctx context.Context, base string, hc *http.Client) error {
			api := slack.New(token, slack.OptionAPIURL(base+"/api/"), slack.OptionHTTPClient(hc))
			chans, _, err := api.GetConversationsContext(ctx, &slack.GetConversationsParameters{Limit: 20, ExcludeArchived: true, Types: []string{"public_channel"}})
			if err == nil && len(chans) != 20 {
				err = fmt.Errorf("slack: %d channels, want 20", len(chans))
			}
			return err
		}),
	},
	{
		name: "github", what: "github.get_issue",
		config: "{base_url: \"%s/\", allow_private_networks: true}", secrets: map[string]string{"token": token},
		tool: "github__get_issue", args: map[string]any{"repo": "acme/api", "number": 1}, want: "Checkout fails on empty cart",
		raw: benchkit.RawRead{Method: "GET", URL: "/api/v3/repos/acme/api/issues/1",
			Header: map[string]string{"Authorization": "Bearer " + token, "Accept": "application/vnd.github.v3+json", "X-GitHub-Api-Version": "2022-11-28"}},
		open: perCall(func(ctx context.Context, base string, hc *http.Client) error {
			c, err := github.NewClient(hc).WithAuthToken(token).WithEnterpriseURLs(base+"/", base+"/")
			if err != nil {
				return err
			}
			is, _, err := c.Issues.Get(ctx, "acme", "api", 1)
			if err == nil && is.GetNumber() != 1 {
				err = fmt.Errorf("github: issue %d, want 1", is.GetNumber())
			}
			return err
		}),
	},
	{
		// notionapi has no base URL: the connector's transport, and
		// rewrite here, send its requests to the stand-in. WithRetry(1)
		// keeps its own 429 retry off, as the connector does.
		name: "notion", what: "notion.search (20 pages)",
		config: "{base_url: \"%s\", allow_private_networks: true}", secrets: map[string]string{"token": notionToken},
		tool: "notion__search", args: map[string]any{"query": "notes", "limit": 20}, want: "Meeting notes 20",
		raw: benchkit.RawRead{Method: "POST", URL: "/v1/search",
			Body:   `{"query":"notes","sort":{"direction":"descending","timestamp":"last_edited_time"},"filter":{"value":"page","property":"object"},"page_size":20}`,
			Header: map[string]string{"Authorization": "Bearer " + notionToken, "Notion-Version": "2022-06-28", "Content-Type": "application/json"}},
		open: func(_ context.Context, base string, hc *http.Client) (func(context.Context) error, error) {
			u, err := url.Parse(base)
			if err != nil {
				return nil, err
			}
			api := notionapi.NewClient(notionapi.Token(notionToken), notionapi.WithRetry(1),
				notionapi.WithHTTPClient(&http.Client{Transport: rewrite{u, hc.Transport}}))
			req := &notionapi.SearchRequest{Query: "notes", PageSize: 20, Filter: notionapi.SearchFilter{Property: "object", Value: "page"},
				Sort: &notionapi.SortObject{Timestamp: notionapi.TimestampLastEdited, Direction: notionapi.SortOrderDESC}}
			return func(ctx context.Context) error {
				res, err := api.Search.Do(ctx, req)
				if err == nil && len(res.Results) != 20 {
					err = fmt.Errorf("notion: %d results, want 20", len(res.Results))
				}
				return err
			}, nil
		},
	},
	{
		// The refresh token is exchanged for an access token once (the
		// connector holds it until a minute before it expires); each
		// read is then one values.get with it.
		name: "google", what: "google.sheets_read_range (20 rows of 5 cells)",
		config:  "{client_id: " + clientID + ", oauth_url: \"%[1]s/token\", sheets_url: \"%[1]s/\", drive_url: \"%[1]s/\", allow_private_networks: true}",
		secrets: map[string]string{"refresh_token": refreshToken, "client_secret": clientSecret},
		tool:    "google__sheets_read_range", args: map[string]any{"spreadsheet_id": spreadsheet, "range": "Sheet1!A1:E"}, want: "SO-1019",
		raw: benchkit.RawRead{Method: "GET", URL: "/v4/spreadsheets/" + spreadsheet + "/values/" + url.PathEscape(sheetWindow) + "?alt=json&prettyPrint=false&valueRenderOption=FORMATTED_VALUE",
			Header: map[string]string{"Authorization": "Bearer " + accessToken}},
		open: func(ctx context.Context, base string, hc *http.Client) (func(context.Context) error, error) {
			conf := &oauth2.Config{ClientID: clientID, ClientSecret: clientSecret,
				Endpoint: oauth2.Endpoint{TokenURL: base + "/token", AuthStyle: oauth2.AuthStyleInParams}}
			client := conf.Client(context.WithValue(ctx, oauth2.HTTPClient, hc), &oauth2.Token{RefreshToken: refreshToken})
			api, err := sheets.NewService(ctx, option.WithHTTPClient(client), option.WithEndpoint(base+"/"))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				vr, err := api.Spreadsheets.Values.Get(spreadsheet, sheetWindow).ValueRenderOption("FORMATTED_VALUE").Context(ctx).Do()
				if err == nil && len(vr.Values) != 20 {
					err = fmt.Errorf("google: %d rows, want 20", len(vr.Values))
				}
				return err
			}, nil
		},
	},
	{
		// One backend for the instance, stripe-go's retries off, as the
		// connector has it.
		name: "stripe", what: "stripe.get_customer",
		config: "{base_url: \"%s\", mode: test, allow_private_networks: true}", secrets: map[string]string{"secret_key": stripeKey},
		tool: "stripe__get_customer", args: map[string]any{"customer_id": customer}, want: customerEmail,
		raw: benchkit.RawRead{Method: "GET", URL: "/v1/customers/" + customer,
			Header: map[string]string{"Authorization": "Bearer " + stripeKey}},
		open: func(_ context.Context, base string, hc *http.Client) (func(context.Context) error, error) {
			sc := stripe.NewClient(stripeKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
				URL: stripe.String(base), HTTPClient: hc, MaxNetworkRetries: stripe.Int64(0),
				LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}, EnableTelemetry: stripe.Bool(false),
			})))
			return func(ctx context.Context) error {
				cu, err := sc.V1Customers.Retrieve(ctx, customer, nil)
				if err == nil && cu.ID != customer {
					err = fmt.Errorf("stripe: customer %q, want %s", cu.ID, customer)
				}
				return err
			}, nil
		},
	},
}

// rewrite sends notionapi's requests, made for https://api.notion.com, to
// base: the least a direct caller of the library needs to reach the
// stand-in.
type rewrite struct {
	base *url.URL
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (rw rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rw.base.Scheme, rw.base.Host, ""
	return rw.next.RoundTrip(r)
}

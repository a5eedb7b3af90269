package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/store"
)

// ToolName is the name of each receiving instance's events tool.
const ToolName = "events_list"

// URIPrefix starts the URI of an instance's events resource:
// legate://events/{instance}.
const URIPrefix = "legate://events/"

// Schema names the shape of Event.
const Schema = "event.v1"

// Pages of events_list, and the events a resource read shows.
const (
	DefaultLimit, MaxLimit = 20, 100
	ResourceEvents         = 20
)

// Event is an event as clients read it (event.v1).
type Event struct {
	Schema string `json:"schema" jsonschema:"event.v1"`
	// ID is Legate's id of the event, increasing.
	ID       string    `json:"id"`
	Kind     string    `json:"kind" jsonschema:"normalised kind (message.posted, issues.opened, charge.refunded, page.updated), else the provider's own type"`
	Object   string    `json:"object,omitempty" jsonschema:"the provider's id or URL of what the event is about"`
	Actor    string    `json:"actor,omitempty" jsonschema:"the provider's id or login of who caused it"`
	Time     time.Time `json:"time" jsonschema:"when the provider says it happened"`
	Received time.Time `json:"received"`
	Instance string    `json:"instance"`
	Provider string    `json:"provider"`
	// ProviderEventID is the provider's id of the event.
	ProviderEventID string            `json:"provider_event_id"`
	Meta            map[string]string `json:"meta,omitempty"`
	// Payload is the delivery's JSON body; PayloadText a body that is
	// not JSON (a Slack command) or was cut (Truncated).
	Payload     json.RawMessage `json:"payload,omitempty"`
	PayloadText string          `json:"payload_text,omitempty"`
	Truncated   bool            `json:"truncated,omitempty"`
}

// EventOf is the client's shape of a stored event, with its payload or
// without.
func EventOf(e store.Event, payload bool) Event {
	out := Event{Schema: Schema, ID: strconv.FormatInt(e.ID, 10), Kind: e.Kind, Object: e.Object, Actor: e.Actor,
		Time: e.Time, Received: e.Received, Instance: e.Instance, Provider: e.Provider, ProviderEventID: e.ProviderID, Truncated: e.Truncated}
	_ = json.Unmarshal(e.Meta, &out.Meta)
	if payload {
		if !e.Truncated && json.Valid(e.Payload) {
			out.Payload = e.Payload
		} else {
			out.PayloadText = string(e.Payload)
		}
	}
	return out
}

// listIn are events_list's arguments.
type listIn struct {
	saas.Page
	Kind           string `json:"kind,omitempty" jsonschema:"only events of this kind (issues.opened), or of kinds starting with it when it ends in a dot (issues.)"`
	Since          string `json:"since,omitempty" jsonschema:"only events received at or after this time (RFC 3339)"`
	IncludePayload bool   `json:"include_payload,omitempty" jsonschema:"include each event's payload as the provider sent it (bounded)"`
}

// Tools are the tools hooks adds to instance in: events_list, when its
// type receives webhooks and it declares the webhook credential.
func (h *Hooks) Tools(in Instance) []connectors.Tool {
	p, ok := providers[in.Type]
	if !ok || in.Credentials == nil || !in.Credentials.Has(p.credential) {
		return nil
	}
	kit := saas.New(connectors.Instance{ID: in.ID}, saas.Options{Provider: in.ID})
	desc := fmt.Sprintf("List the %s events this instance received by webhook, newest first: kind, object, actor, time, provider event id and metadata (payload on request). Filter by kind and since; page with limit (default %d, at most %d) and cursor. Resource %s%s is the latest, with update notifications.",
		in.Type, DefaultLimit, MaxLimit, URIPrefix, in.ID)
	return []connectors.Tool{connectors.NewTool(ToolName, desc, legate.ClassRead, func(ctx context.Context, call *connectors.Call, a *listIn) (*legate.Result, error) {
		pg, err := kit.Open(call, a.Page, DefaultLimit, MaxLimit)
		if err != nil {
			return nil, err
		}
		q := store.EventQuery{Instance: in.ID, Kind: a.Kind, Limit: pg.Size + 1}
		if a.Since != "" {
			if q.Since, err = time.Parse(time.RFC3339, a.Since); err != nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "%s.%s: since: not an RFC 3339 time: %q", in.ID, ToolName, a.Since)
			}
		}
		if pg.Token != "" {
			if q.BeforeID, err = strconv.ParseInt(pg.Token, 10, 64); err != nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "%s.%s: cursor: not a cursor of this tool", in.ID, ToolName)
			}
		}
		evs, err := h.o.Events.List(ctx, q)
		if err != nil {
			return nil, legate.Errorf(legate.CodeTransient, "%s.%s: reading the events: %v", in.ID, ToolName, err)
		}
		next := ""
		if len(evs) > pg.Size {
			evs = evs[:pg.Size]
			next = strconv.FormatInt(evs[len(evs)-1].ID, 10)
		}
		items := make([]Event, len(evs))
		for i, e := range evs {
			items[i] = EventOf(e, a.IncludePayload)
		}
		out := saas.ListOf(kit, call, items, next)
		return &legate.Result{Structured: out, Text: summary(items, out.NextCursor)}, nil
	})}
}

// summary is the text of a page of events.
func summary(items []Event, next string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events", len(items))
	for _, e := range items {
		fmt.Fprintf(&b, "\n%s %s %s %s by %s", e.Received.Format(time.RFC3339), e.Kind, e.ProviderEventID, e.Object, e.Actor)
	}
	if next != "" {
		fmt.Fprintf(&b, "\nnext_cursor: %s", next)
	}
	return b.String()
}

// sees reports whether p may read instance id's events: its view holds
// the instance's events tool, so the same tenant, profile and selection
// checks as every tool of the instance decide.
func (h *Hooks) sees(p *auth.Principal, id string) bool {
	if _, _, ok := h.receiver(id); !ok {
		return false
	}
	e, ok := h.o.View(p).Lookup(id + "." + ToolName)
	return ok && e.Canonical == id+"."+ToolName
}

// visible lists the instances whose events p may read.
func (h *Hooks) visible(p *auth.Principal) []string {
	var out []string
	for _, e := range h.o.View(p).Entries() {
		if id, ok := strings.CutSuffix(e.Canonical, "."+ToolName); ok && h.sees(p, id) {
			out = append(out, id)
		}
	}
	return out
}

// errNoResource is the answer for an events resource a caller may not
// read, or that does not exist: the same for both.
func errNoResource(uri string) error { return mcp.ResourceNotFoundError(uri) }

// Owns reports whether uri is an events resource.
func (h *Hooks) Owns(uri string) bool { return strings.HasPrefix(uri, URIPrefix) }

// Middleware answers resources/read of the events resources, and adds
// them to resources/list and their template to resources/templates/list
// (for a caller that may read one); the rest goes on.
func (h *Hooks) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/read":
			r := req.(*mcp.ReadResourceRequest)
			if r.Params != nil && h.Owns(r.Params.URI) {
				return h.read(ctx, principal(r.Extra), r.Params.URI)
			}
		case "resources/list":
			r := req.(*mcp.ListResourcesRequest)
			res, err := next(ctx, method, req)
			if r.Params != nil && r.Params.Cursor != "" {
				return res, err // our resources are on the first page
			}
			out, _ := res.(*mcp.ListResourcesResult)
			if err != nil || out == nil {
				out = &mcp.ListResourcesResult{}
			}
			for _, id := range h.visible(principal(r.Extra)) {
				out.Resources = append(out.Resources, &mcp.Resource{URI: URIPrefix + id, Name: "events of " + id,
					Description: "The latest events " + id + " received by webhook (event.v1); subscribe for updates", MIMEType: "application/json"})
			}
			return out, nil
		case "resources/templates/list":
			r := req.(*mcp.ListResourceTemplatesRequest)
			res, err := next(ctx, method, req)
			out, _ := res.(*mcp.ListResourceTemplatesResult)
			if err != nil || out == nil {
				out = &mcp.ListResourceTemplatesResult{}
			}
			if (r.Params == nil || r.Params.Cursor == "") && len(h.visible(principal(r.Extra))) > 0 {
				out.ResourceTemplates = append(out.ResourceTemplates, &mcp.ResourceTemplate{URITemplate: URIPrefix + "{instance}", Name: "events",
					Description: "The latest events a connector instance received by webhook (event.v1)", MIMEType: "application/json"})
			}
			return out, nil
		}
		return next(ctx, method, req)
	}
}

func principal(extra *mcp.RequestExtra) *auth.Principal {
	if extra == nil {
		return nil
	}
	return auth.PrincipalFrom(extra.TokenInfo)
}

// read answers resources/read of an events resource: its latest events,
// without payloads.
func (h *Hooks) read(ctx context.Context, p *auth.Principal, uri string) (*mcp.ReadResourceResult, error) {
	id := strings.TrimPrefix(uri, URIPrefix)
	if !h.sees(p, id) {
		return nil, errNoResource(uri)
	}
	evs, err := h.o.Events.List(ctx, store.EventQuery{Instance: id, Limit: ResourceEvents})
	if err != nil {
		return nil, fmt.Errorf("reading the events of %s: %w", id, err)
	}
	items := make([]Event, len(evs))
	for i, e := range evs {
		items[i] = EventOf(e, false)
	}
	b, _ := json.Marshal(struct {
		Instance string  `json:"instance"`
		Events   []Event `json:"events"`
	}{id, items})
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// Subscribe accepts a subscription to an events resource the caller may
// read; the SDK's server records it and ResourceUpdated reaches it.
func (h *Hooks) Subscribe(_ context.Context, r *mcp.SubscribeRequest) error {
	id := strings.TrimPrefix(r.Params.URI, URIPrefix)
	if !h.sees(principal(r.Extra), id) {
		return errNoResource(r.Params.URI)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subscribed[id] = true
	return nil
}

// Unsubscribe ends a subscription; the SDK's server forgets it.
func (h *Hooks) Unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }

// updated tells the subscribers of instance id's resource.
func (h *Hooks) updated(ctx context.Context, id string) {
	if h.o.Server == nil {
		return
	}
	if s := h.o.Server(); s != nil {
		_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: URIPrefix + id})
	}
}

// Run prunes the events past Retention, and, on a store shared by
// replicas (store.EventWatcher), tells subscribers of the events any
// replica stores, until ctx ends.
func (h *Hooks) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if w, ok := h.o.Events.(store.EventWatcher); ok {
		wg.Go(func() {
			for id := range w.WatchEvents(ctx) {
				if id != "" {
					h.updated(ctx, id)
					continue
				}
				// The watch (re)started: what was stored while it did not
				// listen was not told, so every subscriber re-reads.
				h.mu.Lock()
				ids := slices.Collect(maps.Keys(h.subscribed))
				h.mu.Unlock()
				for _, id := range ids {
					h.updated(ctx, id)
				}
			}
		})
	}
	store.PruneEvery(ctx, h.o.Log, "webhook events", Retention, h.o.Events.Prune)
	wg.Wait()
}

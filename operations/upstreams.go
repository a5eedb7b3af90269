package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/internal/jsonindent"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// UpstreamOps are the operations on upstreams: list, add (connecting and
// caching the tools), remove, refresh, and their quarantine.
type UpstreamOps struct{ *parts }

// Upstreams lists the upstreams with their live state.
func (o *UpstreamOps) Upstreams(ctx context.Context) ([]admin.UpstreamStatus, error) {
	ups, err := o.p.Upstreams.Status(ctx)
	if err != nil {
		return nil, err
	}
	quarantined := map[string][]string{}
	for _, q := range o.p.Upstreams.Quarantine() {
		quarantined[q.Tool.Upstream] = append(quarantined[q.Tool.Upstream], q.Tool.Name)
	}
	out := make([]admin.UpstreamStatus, 0, len(ups))
	for _, u := range ups {
		out = append(out, admin.UpstreamStatus{
			ID: u.ID, Transport: u.Transport, Origin: u.Origin, Circuit: u.Circuit, Sessions: u.Sessions, Tools: u.Tools,
			Quarantined: quarantined[u.ID], RefreshedAt: u.RefreshedAt, CheckedAt: u.CheckedAt, LastError: u.LastError,
		})
	}
	return out, nil
}

// AddUpstream validates an upstream definition and adds it to the store;
// with connect, it then connects to the upstream and caches its tools, and
// removes it again when that fails: an upstream that cannot be listed
// would be served with no tools and a failing circuit.
func (o *UpstreamOps) AddUpstream(ctx context.Context, raw json.RawMessage, connect bool) (_ admin.Refresh, err error) {
	var def upstream.Config
	defer func() { o.audited(ctx, "upstreams.add", "upstream "+def.ID, err) }()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&def); err != nil {
		return admin.Refresh{}, fmt.Errorf("%w: an upstream definition: %v", admin.ErrInvalid, err)
	}
	added := admin.Refresh{ID: def.ID}
	if errs := def.Validate("upstream " + def.ID); len(errs) > 0 {
		return added, fmt.Errorf("%w: %v", admin.ErrInvalid, errors.Join(errs...))
	}
	if slices.ContainsFunc(o.p.Config().Upstreams, func(u upstream.Config) bool { return u.ID == def.ID }) {
		return added, fmt.Errorf("upstream id %q is already defined in %s; pick another id: %w", def.ID, o.file(), store.ErrExists)
	}
	b, _ := json.Marshal(def)
	if err := o.p.Store.Upstreams().Create(ctx, store.Upstream{ID: def.ID, Definition: b}); err != nil {
		if errors.Is(err, store.ErrExists) {
			return added, fmt.Errorf("upstream %q is already in the store; remove it first: %w", def.ID, err)
		}
		return added, err
	}
	if !connect {
		return added, nil
	}
	r, err := o.refresh(ctx, def.ID)
	if err != nil {
		if derr := o.p.Store.Upstreams().Delete(context.WithoutCancel(ctx), def.ID); derr != nil {
			err = fmt.Errorf("%w; and removing it again failed: %v", err, derr)
		}
		return added, &admin.Error{Status: 502, Message: fmt.Sprintf("upstream %q not added: %v", def.ID, err)}
	}
	return r, nil
}

// newUpstreamWait bounds the wait for a running server's watch of the
// store to build an upstream just added (it does within a second).
const newUpstreamWait = 10 * time.Second

// refresh connects to the upstream id, lists its tools and caches them:
// through the server's upstreams, or without a server through upstreams
// built for it (Parts.Connect).
func (o *UpstreamOps) refresh(ctx context.Context, id string) (admin.Refresh, error) {
	m := o.p.Upstreams
	if m == nil {
		built, done, err := o.p.Connect(ctx)
		if err != nil {
			return admin.Refresh{}, err
		}
		defer done()
		m = built
	}
	for deadline := time.Now().Add(newUpstreamWait); ; time.Sleep(100 * time.Millisecond) {
		if _, ok := m.Upstream(id); ok {
			break
		}
		if time.Now().After(deadline) {
			return admin.Refresh{}, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
		}
	}
	d, err := m.Refresh(ctx, id)
	if err != nil {
		return admin.Refresh{}, err
	}
	r := admin.Refresh{ID: id, Added: d.Added, Removed: d.Removed, Changed: d.Changed}
	for _, t := range m.Tools() {
		if t.Upstream == id {
			r.Tools++
		}
	}
	return r, nil
}

// RemoveUpstream removes a stored upstream and its cache.
func (o *UpstreamOps) RemoveUpstream(ctx context.Context, id string) (err error) {
	defer func() { o.audited(ctx, "upstreams.remove", "upstream "+id, err) }()
	err = o.p.Store.Upstreams().Delete(ctx, id)
	if errors.Is(err, store.ErrNotFound) && slices.ContainsFunc(o.p.Config().Upstreams, func(u upstream.Config) bool { return u.ID == id }) {
		return &admin.Error{Status: 409, Message: fmt.Sprintf("upstream %q is defined in the config file, not in the store: edit the file to remove it", id)}
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no upstream %q in the store: %w", id, store.ErrNotFound)
	}
	return err
}

// RefreshUpstream lists an upstream's tools again.
func (o *UpstreamOps) RefreshUpstream(ctx context.Context, id string) (_ admin.Refresh, err error) {
	defer func() { o.audited(ctx, "upstreams.refresh", "upstream "+id, err) }()
	if _, ok := o.p.Upstreams.Upstream(id); !ok {
		return admin.Refresh{}, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
	}
	r, err := o.refresh(ctx, id)
	if err != nil {
		return admin.Refresh{}, &admin.Error{Status: 502, Message: fmt.Sprintf("upstream %s: %v", id, err)}
	}
	return r, nil
}

// Quarantine lists quarantined tools with both definitions.
func (o *UpstreamOps) Quarantine(_ context.Context, id string) ([]admin.QuarantinedTool, error) {
	if _, ok := o.p.Upstreams.Upstream(id); id != "" && !ok {
		return nil, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
	}
	out := []admin.QuarantinedTool{}
	for _, q := range o.p.Upstreams.Quarantine() {
		if id == "" || q.Tool.Upstream == id {
			out = append(out, quarantined(q))
		}
	}
	return out, nil
}

func quarantined(q upstream.Quarantined) admin.QuarantinedTool {
	now, _ := jsonindent.Marshal(q.Tool.Def)
	var acc []byte
	if len(q.Pinned) > 0 {
		var v any
		if json.Unmarshal(q.Pinned, &v) == nil {
			acc, _ = jsonindent.Marshal(v)
		}
	}
	return admin.QuarantinedTool{Upstream: q.Tool.Upstream, Tool: q.Tool.Canonical(), Name: q.Tool.Name,
		AcceptedHash: q.PinnedHash, Hash: q.Tool.Hash, Accepted: acc, Now: now}
}

// Accept releases quarantined tools of an upstream.
func (o *UpstreamOps) Accept(ctx context.Context, id, by string, tools []string) (got []string, err error) {
	defer func() {
		o.audited(ctx, "upstreams.accept", fmt.Sprintf("upstream %s: %s", id, strings.Join(got, ", ")), err)
	}()
	if _, ok := o.p.Upstreams.Upstream(id); !ok {
		return nil, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
	}
	got, err = o.p.Upstreams.Accept(ctx, id, by, tools...)
	if err != nil {
		return got, fmt.Errorf("%w: %v", admin.ErrInvalid, err)
	}
	return got, nil
}

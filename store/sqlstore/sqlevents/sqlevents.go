// Package sqlevents is the store of inbound provider events
// (store.EventStore) over database/sql, for package sqlstore, which hands
// it its database and its dialect's placeholders and notifications.
package sqlevents

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

// eventStore keeps inbound provider events. Add is one INSERT … ON
// CONFLICT DO NOTHING on the (instance, provider_id) key: of racing
// deliveries of one event the database keeps one, and the others read it.
type eventStore struct {
	db     *sql.DB
	rebind func(query string) string
}

// New is the event store on db, whose statements rebind writes in the
// backend's placeholders (they are written with ?). With watch, which
// tells of every event added in any process on the database, it is a
// store.EventWatcher.
func New(db *sql.DB, rebind func(string) string, watch func(ctx context.Context) <-chan string) store.EventStore {
	s := eventStore{db: db, rebind: rebind}
	if watch != nil {
		return watched{s, watch}
	}
	return s
}

// watched is the store of a database that tells of new events.
type watched struct {
	eventStore
	watch func(ctx context.Context) <-chan string
}

// WatchEvents tells of every event added, in any process on the database.
func (w watched) WatchEvents(ctx context.Context) <-chan string { return w.watch(ctx) }

var _ store.EventWatcher = watched{}

const eventCols = `id, instance, tenant, provider, provider_id, kind, object, actor, time, received, meta, payload, truncated`

func (s eventStore) Add(ctx context.Context, e store.Event) (store.Event, bool, error) {
	if e.Received.IsZero() {
		e.Received = time.Now()
	}
	e.Time, e.Received = e.Time.Truncate(time.Millisecond).UTC(), e.Received.Truncate(time.Millisecond).UTC()
	if e.Meta == nil {
		e.Meta = []byte("{}")
	}
	if e.Payload == nil {
		e.Payload = []byte{}
	}
	trunc := 0
	if e.Truncated {
		trunc = 1
	}
	err := s.db.QueryRowContext(ctx, s.rebind(`INSERT INTO events (instance, tenant, provider, provider_id, kind, object, actor, time, received, meta, payload, truncated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (instance, provider_id) DO NOTHING RETURNING id`),
		e.Instance, e.Tenant, e.Provider, e.ProviderID, e.Kind, e.Object, e.Actor, e.Time.UnixMilli(), e.Received.UnixMilli(),
		e.Meta, e.Payload, trunc).Scan(&e.ID)
	switch {
	case err == nil:
		return e, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return store.Event{}, false, fmt.Errorf("storing event %s of %s: %w", e.ProviderID, e.Instance, err)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+eventCols+` FROM events WHERE instance = ? AND provider_id = ?`), e.Instance, e.ProviderID)
	if err != nil {
		return store.Event{}, false, fmt.Errorf("reading event %s of %s: %w", e.ProviderID, e.Instance, err)
	}
	got, err := scanEvents(rows)
	if err != nil || len(got) == 0 {
		return store.Event{}, false, fmt.Errorf("reading event %s of %s: %w", e.ProviderID, e.Instance, cmpErr(err, store.ErrNotFound))
	}
	return got[0], false, nil
}

func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

func (s eventStore) List(ctx context.Context, q store.EventQuery) ([]store.Event, error) {
	limit := q.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	var where []string
	var args []any
	if q.Instance != "" {
		where, args = append(where, "instance = ?"), append(args, q.Instance)
	}
	switch {
	case strings.HasSuffix(q.Kind, "."):
		// A prefix: compared as a range, so that no character of it is a
		// LIKE pattern.
		where, args = append(where, "kind >= ? AND kind < ?"), append(args, q.Kind, q.Kind[:len(q.Kind)-1]+"/")
	case q.Kind != "":
		where, args = append(where, "kind = ?"), append(args, q.Kind)
	}
	if !q.Since.IsZero() {
		where, args = append(where, "received >= ?"), append(args, q.Since.UnixMilli())
	}
	if q.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, q.BeforeID)
	}
	query := `SELECT ` + eventCols + ` FROM events`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(query+fmt.Sprintf(" ORDER BY id DESC LIMIT %d", limit)), args...)
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	return out, nil
}

func scanEvents(rows *sql.Rows) ([]store.Event, error) {
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		var e store.Event
		var at, received, trunc int64
		if err := rows.Scan(&e.ID, &e.Instance, &e.Tenant, &e.Provider, &e.ProviderID, &e.Kind, &e.Object, &e.Actor,
			&at, &received, &e.Meta, &e.Payload, &trunc); err != nil {
			return nil, err
		}
		e.Time, e.Received, e.Truncated = time.UnixMilli(at).UTC(), time.UnixMilli(received).UTC(), trunc != 0
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s eventStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM events WHERE received < ?`), before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning events: %w", err)
	}
	return res.RowsAffected()
}

var _ store.EventStore = eventStore{}

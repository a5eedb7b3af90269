package audit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/legate-mcp/legate/store"
)

// Quarantine is an upstream's tool put in quarantine, as its audit event
// tells it.
type Quarantine struct {
	Upstream, Name, Canonical, Class string
	// Hash is the definition's now; PinnedHash the accepted one, "" when
	// none was ever accepted (pin: strict).
	Hash, PinnedHash string
}

// NewQuarantines returns the quarantine events of a gateway, written by w
// unless log holds them already.
func NewQuarantines(w *Writer, log store.AuditStore, logger *slog.Logger) *Quarantines {
	return &Quarantines{writer: w, log: log, logger: logger}
}

// Quarantined reports a tool put in quarantine: a warning in the log (once
// per process: the manager reports each definition once), and the audit
// event, which only a serving gateway writes (see Quarantines).
func (a *Quarantines) Quarantined(q Quarantine) {
	detail := fmt.Sprintf("definition changed: pinned %.12s, now %.12s; review with legate upstream diff %s, then legate upstream accept %s %s",
		q.PinnedHash, q.Hash, q.Upstream, q.Upstream, q.Name)
	if q.PinnedHash == "" {
		detail = fmt.Sprintf("not accepted yet (pin: strict), definition %.12s; accept with legate upstream accept %s %s", q.Hash, q.Upstream, q.Name)
	}
	a.logger.Warn("upstream tool quarantined", "tool", q.Canonical, "detail", detail)
	a.add(store.AuditRow{Time: time.Now(), Tool: q.Canonical, Source: "upstream:" + q.Upstream,
		Class: q.Class, Decision: "quarantined", Outcome: outcomeQuarantined, Detail: detail})
}

// outcomeQuarantined is the outcome of the audit event of a quarantine.
const outcomeQuarantined = "QUARANTINED"

// Quarantines write the audit event of each quarantine of an upstream's
// tool (upstream.Options.OnQuarantine) once. Only a
// serving gateway writes it: the gateway of a CLI command (legate tools
// list, tools call) loads the same cache and would repeat the event at
// every run. The quarantines found before the gateway serves (those of
// the cache it starts from) wait for start; and an event the audit log
// holds already (the same tool and definition, from before a restart) is
// not written again.
type Quarantines struct {
	writer *Writer
	log    store.AuditStore
	logger *slog.Logger

	mu      sync.Mutex
	serving bool
	held    []store.AuditRow
}

func (a *Quarantines) add(row store.AuditRow) {
	a.mu.Lock()
	if !a.serving {
		a.held = append(a.held, row)
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	a.write(row)
}

// Start makes the gateway a serving one and writes what was held.
func (a *Quarantines) Start() {
	a.mu.Lock()
	held := a.held
	a.serving, a.held = true, nil
	a.mu.Unlock()
	for _, row := range held {
		a.write(row)
	}
}

// write queues row unless the audit log records the same event already.
func (a *Quarantines) write(row store.AuditRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prev, err := a.log.Query(ctx, store.AuditQuery{Tool: row.Tool, Limit: 1000})
	if err == nil && slices.ContainsFunc(prev, func(r store.AuditRow) bool { return r.Outcome == outcomeQuarantined && r.Detail == row.Detail }) {
		return
	}
	a.writer.Add(row)
}

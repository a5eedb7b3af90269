package saas

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/legate-mcp/legate/connectors"
)

// MemoryOperations is a connectors.Operations in memory, with the
// semantics of the gateway's store (store.OperationStore): for tests, and
// for a kit whose calls carry no Operations. Its records end with the
// process.
type MemoryOperations struct {
	mu  sync.Mutex
	ops map[string]*connectors.Operation
}

// NewMemoryOperations returns an empty record.
func NewMemoryOperations() *MemoryOperations {
	return &MemoryOperations{ops: map[string]*connectors.Operation{}}
}

// Begin claims key: see connectors.Operations.
func (m *MemoryOperations) Begin(_ context.Context, key string, lease time.Duration) (connectors.Operation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	op, ok := m.ops[key]
	switch {
	case !ok:
		op = &connectors.Operation{State: connectors.OpNew, Attempts: 1, Started: now, LeaseUntil: now.Add(lease)}
		m.ops[key] = op
		return *op, nil
	case op.State == connectors.OpDone:
		return m.copy(op), nil
	case op.LeaseUntil.After(now):
		busy := *op
		busy.State = connectors.OpBusy
		return busy, nil
	}
	op.State, op.Attempts, op.LeaseUntil = connectors.OpRetry, op.Attempts+1, now.Add(lease)
	return *op, nil
}

// Finish records key's outcome; a second Finish keeps the first.
func (m *MemoryOperations) Finish(_ context.Context, key string, outcome json.RawMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	op, ok := m.ops[key]
	switch {
	case !ok:
		return errors.New("operation " + key + " was never begun")
	case op.State == connectors.OpDone:
		return errors.New("operation " + key + " is finished already")
	}
	op.State, op.Outcome, op.LeaseUntil = connectors.OpDone, slices.Clone(outcome), time.Time{}
	return nil
}

// Abandon ends key's lease, if it is not finished.
func (m *MemoryOperations) Abandon(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if op, ok := m.ops[key]; ok && op.State != connectors.OpDone {
		op.LeaseUntil = time.Time{}
	}
	return nil
}

func (m *MemoryOperations) copy(op *connectors.Operation) connectors.Operation {
	c := *op
	c.Outcome = slices.Clone(op.Outcome)
	return c
}

var _ connectors.Operations = (*MemoryOperations)(nil)

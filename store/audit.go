package store

import (
	"context"
	"time"
)

// AuditRow is one audited call or event. It never holds argument values.
type AuditRow struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Tenant    string    `json:"tenant,omitempty"`
	Session   string    `json:"session,omitempty"`
	// Profile is the profile whose view the call was made in: the one of
	// its URL (/mcp/{profile}), else the caller's own; "" for none.
	Profile    string        `json:"profile,omitempty"`
	Tool       string        `json:"tool"`
	Source     string        `json:"source"`
	Class      string        `json:"class"`
	Decision   string        `json:"decision"` // allow, deny, approve, or an event: quarantined
	Rule       string        `json:"rule,omitempty"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Outcome    string        `json:"outcome"` // ok, or the canonical error code
	Latency    time.Duration `json:"latency_ns"`
	ArgsHash   string        `json:"args_hash,omitempty"`
	ResultSize int           `json:"result_size"`
	Detail     string        `json:"detail,omitempty"`
}

// AuditQuery selects audit rows; zero fields match all.
type AuditQuery struct {
	Tool      string
	Principal string
	Since     time.Time
	AfterID   int64
	Limit     int
}

// AuditStore is the append-only audit log.
type AuditStore interface {
	// Append writes rows in one transaction.
	Append(ctx context.Context, rows []AuditRow) error
	// Query returns matching rows in id order, after AfterID; with no
	// AfterID and a Limit, the newest Limit rows.
	Query(ctx context.Context, q AuditQuery) ([]AuditRow, error)
	// Prune deletes rows older than before.
	Prune(ctx context.Context, before time.Time) (int64, error)
}

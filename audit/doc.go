// Package audit records what the gateway did: one audit row per call,
// written in batches off the call path (Writer); the Prometheus series
// served at /metrics (Metrics); and the events of upstream tools put in
// quarantine (Quarantines).
//
// The call path only appends a row to a buffer; Writer.Run writes the
// buffer in one transaction every 200ms, keeps rows a failed write could
// not store for the next attempt, and prunes rows past their retention.
// A row holds who called, which tool, its class, the policy's decision,
// the outcome and the latency — never an argument value.
package audit

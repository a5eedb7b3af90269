package migrate

// column kinds, as PostgreSQL takes them.
const (
	text  = 't' // TEXT
	ints  = 'i' // BIGINT / INTEGER
	bytes = 'b' // BYTEA
)

// column is one column of a copied table.
type column struct {
	name string
	kind byte
}

// table is one table the copy moves, whole, in key order. Both stores
// name tables and columns alike and keep times in the same units
// (store/postgres's migrations are the embedded store's schema at
// SQLiteSchema), so a row moves as it is.
type table struct {
	name  string
	order string // ORDER BY: the primary key
	cols  []column
	// what the table holds, for people.
	what string
}

// SQLiteSchema is the embedded store's schema version the plan copies; a
// newer one needs the plan extended (a test fails until it is).
const SQLiteSchema = 17

// plan is every table of the state, in an order that never leaves a row
// pointing at one not copied yet (none has a foreign key; the order is for
// people reading the progress).
var plan = []table{
	{"connectors", "id", cols("id t", "type t", "config t", "credentials t", "access t", "created_at i"), "connector instances"},
	{"upstreams", "id", cols("id t", "definition t", "created_at i"), "upstream definitions"},
	{"upstream_status", "id", cols("id t", "refreshed_at i", "checked_at i", "last_error t", "resources t"), "upstream refresh status"},
	{"upstream_tools", "upstream_id, name", cols("upstream_id t", "name t", "definition t", "hash t"), "cached upstream tools"},
	{"pins", "upstream_id, tool", cols("upstream_id t", "tool t", "hash t", "definition t", "accepted_at i", "accepted_by t"), "pinned tool definitions"},
	{"approvals", "id", cols("id t", "principal t", "tenant t", "session t", "tool t", "class t", "args t", "args_hash t", "def_hash t",
		"definition t", "state t", "created_at i", "expires_at i", "decided_at i", "decider t", "reason t", "outcome t", "heartbeat_at i",
		"profile t", "credential_set t"), "approval requests"},
	{"audit", "id", cols("id i", "time i", "principal t", "tenant t", "session t", "tool t", "source t", "class t", "decision t", "rule t",
		"approval_id t", "outcome t", "latency_us i", "args_hash t", "result_size i", "detail t", "profile t"), "audit rows"},
	{"secrets", "tenant, name, version", cols("tenant t", "name t", "version i", "key_id t", "wrapped_key b", "ciphertext b", "created_at i"), "vault secret versions"},
	{"tokens", "name", cols("name t", "hash t", "tenant t", "role t", "profile t", "created_at i", "revoked_at i"), "static tokens"},
	{"operations", "scope, key", cols("scope t", "key t", "attempts i", "started_at i", "lease_until i", "done i", "outcome b"), "operation records"},
	{"users", "name", cols("name t", "tenant t", "role t", "profile t", "password_hash t", "disabled i", "created_at i"), "local users"},
	{"oauth_clients", "id", cols("id t", "name t", "redirect_uris t", "secret_hash t", "created_at i", "last_used_at i"), "OAuth clients"},
	{"oauth_requests", "id", cols("id t", "client_id t", "data b", "code_hash t", "expires_at i"), "OAuth requests in flight"},
	{"oauth_tokens", "id", cols("id t", "kind t", "hash t", "family t", "client_id t", "principal t", "scopes t", "audience t",
		"auth_time i", "created_at i", "expires_at i", "rotated_at i", "revoked_at i"), "OAuth tokens issued"},
	{"oauth_keys", "id", cols("id i", "key b"), "OAuth signing key"},
	{"agent_runs", "id", cols("id t", "principal t", "tenant t", "instruction t", "stopped t", "started_at i", "updated_at i", "record b"), "agent runs"},
	{"kept_results", "id", cols("id t", "tenant t", "principal t", "tool t", "budget i", "created_at i", "expires_at i", "body b"), "results kept whole for their callers"},
	{"embeddings", "key", cols("key t", "vector b", "used_at i"), "the tool search's embeddings"},
	{"events", "id", cols("id i", "instance t", "tenant t", "provider t", "provider_id t", "kind t", "object t", "actor t", "time i", "received i",
		"meta b", "payload b", "truncated i"), "webhook events"},
	{"quota_counts", "budget, window_start", cols("budget t", "window_start i", "used i"), "budget counts"},
	{"kb_generations", "instance", cols("instance t", "generation i"), "knowledge-base generations"},
	{"kb_documents", "instance, source", cols("instance t", "source t", "kind t", "title t", "body t", "hash t", "revision i", "updated_at i"), "knowledge-base documents"},
	{"kb_passages", "instance, source, position", cols("instance t", "source t", "position i", "headings t", "body t", "hash t", "vector_key t", "vector b"), "knowledge-base passages"},
}

// cols parses "name kind" pairs.
func cols(specs ...string) []column {
	out := make([]column, len(specs))
	for i, s := range specs {
		out[i] = column{name: s[:len(s)-2], kind: s[len(s)-1]}
	}
	return out
}

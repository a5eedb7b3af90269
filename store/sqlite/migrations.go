package sqlite

// migrations are applied in order, once each (sqlstore.Migrate); never
// edit a released one, append a new one.
var migrations = []string{
	// 1: connector instances added through the CLI or API.
	`CREATE TABLE connectors (
		id          TEXT PRIMARY KEY,
		type        TEXT NOT NULL,
		config      TEXT NOT NULL DEFAULT '{}',
		credentials TEXT NOT NULL DEFAULT '{}',
		created_at  INTEGER NOT NULL
	)`,
	// 2: upstream MCP servers and their cached tools.
	`CREATE TABLE upstreams (
		id         TEXT PRIMARY KEY,
		definition TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE TABLE upstream_status (
		id           TEXT PRIMARY KEY,
		refreshed_at INTEGER NOT NULL DEFAULT 0,
		checked_at   INTEGER NOT NULL DEFAULT 0,
		last_error   TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE upstream_tools (
		upstream_id TEXT NOT NULL,
		name        TEXT NOT NULL,
		definition  TEXT NOT NULL,
		hash        TEXT NOT NULL,
		PRIMARY KEY (upstream_id, name)
	);
	CREATE TABLE cache_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
	INSERT INTO cache_version VALUES (1, 0);`,
	// 3: the resource URIs each upstream offers, to report URIs two claim.
	`ALTER TABLE upstream_status ADD COLUMN resources TEXT NOT NULL DEFAULT '[]'`,
	// 4: pins, the approval inbox and the audit log.
	`CREATE TABLE pins (
		upstream_id TEXT NOT NULL,
		tool        TEXT NOT NULL,
		hash        TEXT NOT NULL,
		definition  TEXT NOT NULL,
		accepted_at INTEGER NOT NULL,
		accepted_by TEXT NOT NULL,
		PRIMARY KEY (upstream_id, tool)
	);
	CREATE TABLE approvals (
		id          TEXT PRIMARY KEY,
		principal   TEXT NOT NULL,
		tenant      TEXT NOT NULL,
		session     TEXT NOT NULL,
		tool        TEXT NOT NULL,
		class       TEXT NOT NULL,
		args        TEXT NOT NULL,
		args_hash   TEXT NOT NULL,
		def_hash    TEXT NOT NULL,
		definition  TEXT NOT NULL,
		state       TEXT NOT NULL,
		created_at  INTEGER NOT NULL,
		expires_at  INTEGER NOT NULL,
		decided_at  INTEGER NOT NULL DEFAULT 0,
		decider     TEXT NOT NULL DEFAULT '',
		reason      TEXT NOT NULL DEFAULT '',
		outcome     TEXT NOT NULL DEFAULT '',
		heartbeat_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX approvals_binding ON approvals (principal, tenant, tool, args_hash, def_hash, created_at);
	CREATE INDEX approvals_state ON approvals (state, created_at);
	CREATE TABLE audit (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		time        INTEGER NOT NULL,
		principal   TEXT NOT NULL,
		tenant      TEXT NOT NULL,
		session     TEXT NOT NULL,
		tool        TEXT NOT NULL,
		source      TEXT NOT NULL,
		class       TEXT NOT NULL,
		decision    TEXT NOT NULL,
		rule        TEXT NOT NULL,
		approval_id TEXT NOT NULL,
		outcome     TEXT NOT NULL,
		latency_us  INTEGER NOT NULL,
		args_hash   TEXT NOT NULL,
		result_size INTEGER NOT NULL,
		detail      TEXT NOT NULL
	);
	CREATE INDEX audit_time ON audit (time);
	CREATE INDEX audit_tool ON audit (tool, time);`,
	// 5: vault secrets, one row per version: ciphertext and wrapped data key.
	`CREATE TABLE secrets (
		tenant      TEXT NOT NULL,
		name        TEXT NOT NULL,
		version     INTEGER NOT NULL,
		key_id      TEXT NOT NULL,
		wrapped_key BLOB NOT NULL,
		ciphertext  BLOB NOT NULL,
		created_at  INTEGER NOT NULL,
		PRIMARY KEY (tenant, name, version)
	);
	CREATE INDEX secrets_key ON secrets (key_id);`,
	// 6: static bearer tokens, by the SHA-256 of the token (never the token).
	`CREATE TABLE tokens (
		name       TEXT PRIMARY KEY,
		hash       TEXT NOT NULL UNIQUE,
		tenant     TEXT NOT NULL,
		role       TEXT NOT NULL,
		profile    TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		revoked_at INTEGER NOT NULL DEFAULT 0
	)`,
	// 7: idempotency records of connector writes; times in milliseconds.
	`CREATE TABLE operations (
		scope       TEXT NOT NULL,
		key         TEXT NOT NULL,
		attempts    INTEGER NOT NULL,
		started_at  INTEGER NOT NULL,
		lease_until INTEGER NOT NULL,
		done        INTEGER NOT NULL DEFAULT 0,
		outcome     BLOB,
		PRIMARY KEY (scope, key)
	);
	CREATE INDEX operations_started ON operations (started_at);`,
	// 8: the authorization server: local users, registered clients,
	// requests in flight, issued tokens (refresh tokens by their SHA-256)
	// and the signing key.
	`CREATE TABLE users (
		name          TEXT PRIMARY KEY,
		tenant        TEXT NOT NULL,
		role          TEXT NOT NULL,
		profile       TEXT NOT NULL,
		password_hash TEXT NOT NULL,
		disabled      INTEGER NOT NULL DEFAULT 0,
		created_at    INTEGER NOT NULL
	);
	CREATE TABLE oauth_clients (
		id            TEXT PRIMARY KEY,
		name          TEXT NOT NULL,
		redirect_uris TEXT NOT NULL,
		secret_hash   TEXT NOT NULL,
		created_at    INTEGER NOT NULL,
		last_used_at  INTEGER NOT NULL DEFAULT 0
	);
	CREATE TABLE oauth_requests (
		id         TEXT PRIMARY KEY,
		client_id  TEXT NOT NULL,
		data       BLOB NOT NULL,
		code_hash  TEXT NOT NULL,
		expires_at INTEGER NOT NULL
	);
	CREATE INDEX oauth_requests_code ON oauth_requests (code_hash);
	CREATE TABLE oauth_tokens (
		id         TEXT PRIMARY KEY,
		kind       TEXT NOT NULL,
		hash       TEXT,
		family     TEXT NOT NULL,
		client_id  TEXT NOT NULL,
		principal  TEXT NOT NULL,
		scopes     TEXT NOT NULL,
		audience   TEXT NOT NULL,
		auth_time  INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		rotated_at INTEGER NOT NULL DEFAULT 0,
		revoked_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX oauth_tokens_hash ON oauth_tokens (hash);
	CREATE INDEX oauth_tokens_family ON oauth_tokens (family);
	CREATE TABLE oauth_keys (id INTEGER PRIMARY KEY CHECK (id = 1), key BLOB NOT NULL);`,
	// 9: the agent's history, one row per run with its record (JSON);
	// times in milliseconds.
	`CREATE TABLE agent_runs (
		id          TEXT PRIMARY KEY,
		principal   TEXT NOT NULL,
		tenant      TEXT NOT NULL,
		instruction TEXT NOT NULL,
		stopped     TEXT NOT NULL,
		started_at  INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL,
		record      BLOB NOT NULL
	);
	CREATE INDEX agent_runs_started ON agent_runs (started_at);`,
	// 10: a stored connector instance's credentials mode and OAuth app
	// (JSON; the client secret a reference).
	`ALTER TABLE connectors ADD COLUMN access TEXT NOT NULL DEFAULT '{}'`,
	// 11: the profile whose view each call was made in; an approval
	// request's, and the credential set its call uses.
	`ALTER TABLE audit ADD COLUMN profile TEXT NOT NULL DEFAULT '';
	ALTER TABLE approvals ADD COLUMN profile TEXT NOT NULL DEFAULT '';
	ALTER TABLE approvals ADD COLUMN credential_set TEXT NOT NULL DEFAULT ''`,
	// 12: the whole of results cut to a token budget, kept for their
	// callers until they expire; times in milliseconds.
	`CREATE TABLE kept_results (
		id         TEXT PRIMARY KEY,
		tenant     TEXT NOT NULL,
		principal  TEXT NOT NULL,
		tool       TEXT NOT NULL,
		budget     INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		body       BLOB NOT NULL
	);
	CREATE INDEX kept_results_expires ON kept_results (expires_at);`,
	// 13: inbound provider events (webhook deliveries), one per instance
	// and provider event id; times in milliseconds.
	`CREATE TABLE events (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		instance    TEXT NOT NULL,
		tenant      TEXT NOT NULL,
		provider    TEXT NOT NULL,
		provider_id TEXT NOT NULL,
		kind        TEXT NOT NULL,
		object      TEXT NOT NULL,
		actor       TEXT NOT NULL,
		time        INTEGER NOT NULL,
		received    INTEGER NOT NULL,
		meta        BLOB NOT NULL,
		payload     BLOB NOT NULL,
		truncated   INTEGER NOT NULL
	);
	CREATE UNIQUE INDEX events_provider_id ON events (instance, provider_id);
	CREATE INDEX events_received ON events (received);`,
	// 14: the budgets' counts, one per budget and window (its start in
	// milliseconds).
	`CREATE TABLE quota_counts (
		budget       TEXT NOT NULL,
		window_start INTEGER NOT NULL,
		used         INTEGER NOT NULL,
		PRIMARY KEY (budget, window_start)
	);`,
	// 15: the knowledge-base instances' documents and passages, for their
	// replicas to share: a generation per instance, moved by each write;
	// headings a JSON array, vectors little-endian float32s (empty: none);
	// times in milliseconds.
	`CREATE TABLE kb_generations (
		instance   TEXT PRIMARY KEY,
		generation INTEGER NOT NULL
	);
	CREATE TABLE kb_documents (
		instance   TEXT NOT NULL,
		source     TEXT NOT NULL,
		kind       TEXT NOT NULL,
		title      TEXT NOT NULL,
		body       TEXT NOT NULL,
		hash       TEXT NOT NULL,
		revision   INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (instance, source)
	);
	CREATE TABLE kb_passages (
		instance   TEXT NOT NULL,
		source     TEXT NOT NULL,
		position   INTEGER NOT NULL,
		headings   TEXT NOT NULL,
		body       TEXT NOT NULL,
		hash       TEXT NOT NULL,
		vector_key TEXT NOT NULL,
		vector     BLOB NOT NULL,
		PRIMARY KEY (instance, source, position)
	);`,
	// 16: the pending requests listed newest first stop at the page's end
	// (store.ApprovalStore.List): the state index ends with the listing's
	// order, and a tenant's listing has one of its own.
	`DROP INDEX approvals_state;
	CREATE INDEX approvals_state ON approvals (state, created_at, id);
	CREATE INDEX approvals_tenant_state ON approvals (tenant, state, created_at, id);`,
	// 17: the tool search's embeddings, by key (store.EmbeddingStore).
	`CREATE TABLE embeddings (
		key     TEXT PRIMARY KEY,
		vector  BLOB NOT NULL,
		used_at INTEGER NOT NULL
	);
	CREATE INDEX embeddings_used ON embeddings (used_at);`,
}

// createMigrations creates the table recording the migrations applied.
const createMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`

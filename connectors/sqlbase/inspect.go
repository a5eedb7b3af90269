package sqlbase

import "github.com/legate-mcp/legate/connectors"

// Toolsets are the SQL connectors' groups of tools, all offered by default.
var Toolsets = []connectors.Toolset{
	{Name: "query", Description: "query, schema and execute: read, list and change the data", Default: true},
	{Name: "inspect", Description: "describe_table and sample_table: one table's structure and rows", Default: true},
	{Name: "diagnostics", Description: "explain, top_queries and health: plans, costly statements, the server's health", Default: true},
}

// WithToolsets sets each tool's toolset (query unless named here) and
// returns tools. The inspection tools' results below are one shape
// whatever the database; each connector builds them in its own package.
func WithToolsets(tools []connectors.Tool) []connectors.Tool {
	sets := map[string]string{"describe_table": "inspect", "sample_table": "inspect", "explain": "diagnostics", "top_queries": "diagnostics", "health": "diagnostics"}
	for i := range tools {
		if tools[i].Toolset = sets[tools[i].Name]; tools[i].Toolset == "" {
			tools[i].Toolset = "query"
		}
	}
	return tools
}

// TableDescription is the structured result of describe_table.
type TableDescription struct {
	Schema      string            `json:"schema" jsonschema:"Schema (postgres) or database (mysql) of the table"`
	Name        string            `json:"name"`
	Kind        string            `json:"kind" jsonschema:"table, view, materialized view, foreign table or partitioned table"`
	Columns     []DescribedColumn `json:"columns"`
	PrimaryKey  []string          `json:"primary_key" jsonschema:"Columns of the primary key, in key order; empty when none"`
	ForeignKeys []ForeignKey      `json:"foreign_keys"`
	Indexes     []Index           `json:"indexes"`
	Checks      []Constraint      `json:"checks" jsonschema:"CHECK constraints"`
	Uniques     []Constraint      `json:"uniques" jsonschema:"UNIQUE constraints"`
	RowEstimate *int64            `json:"row_estimate" jsonschema:"Rows the planner's statistics estimate (pg_class.reltuples, TABLES.TABLE_ROWS); null when never analyzed"`
}

// DescribedColumn is one column of describe_table.
type DescribedColumn struct {
	Name     string  `json:"name"`
	Type     string  `json:"type" jsonschema:"Full database type, e.g. character varying(80), int(11) unsigned"`
	Nullable bool    `json:"nullable"`
	Default  *string `json:"default" jsonschema:"Default expression as the database shows it; null when none"`
}

// ForeignKey is one foreign key of describe_table.
type ForeignKey struct {
	Name       string   `json:"name"`
	Columns    []string `json:"columns"`
	RefSchema  string   `json:"ref_schema" jsonschema:"Schema or database of the referenced table"`
	RefTable   string   `json:"ref_table"`
	RefColumns []string `json:"ref_columns"`
	OnUpdate   string   `json:"on_update" jsonschema:"NO ACTION, RESTRICT, CASCADE, SET NULL or SET DEFAULT"`
	OnDelete   string   `json:"on_delete"`
}

// Index is one index of describe_table.
type Index struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns" jsonschema:"Indexed columns in order; an expression is given as its text"`
	Unique  bool     `json:"unique"`
	Primary bool     `json:"primary"`
	Method  string   `json:"method" jsonschema:"Access method: btree, hash, gin, gist, brin … (postgres); BTREE, HASH, FULLTEXT, SPATIAL (mysql)"`
}

// Constraint is a CHECK or UNIQUE constraint of describe_table.
type Constraint struct {
	Name       string   `json:"name"`
	Columns    []string `json:"columns,omitempty"`
	Definition string   `json:"definition,omitempty" jsonschema:"The CHECK expression"`
}

// ExplainResult is the structured result of explain.
type ExplainResult struct {
	Format   string `json:"format" jsonschema:"json or text"`
	Analyzed bool   `json:"analyzed" jsonschema:"The statement ran (ANALYZE) and the plan holds actual times and rows"`
	Plan     any    `json:"plan" jsonschema:"The plan: the server's JSON document for json; for text, the plan's lines (postgres, MySQL's EXPLAIN ANALYZE) or its rows as objects (mysql)"`
}

// TopQuery is one statement of top_queries, normalized by the server.
type TopQuery struct {
	Query       string  `json:"query" jsonschema:"The normalized statement, constants replaced by placeholders"`
	Calls       int64   `json:"calls"`
	TotalMillis float64 `json:"total_ms" jsonschema:"Time spent executing it in all calls, in milliseconds"`
	MeanMillis  float64 `json:"mean_ms"`
	Rows        int64   `json:"rows" jsonschema:"Rows returned or affected in all calls"`
	Schema      string  `json:"schema,omitempty" jsonschema:"Database it ran in (mysql)"`
}

// TopQueriesResult is the structured result of top_queries.
type TopQueriesResult struct {
	Source  string     `json:"source" jsonschema:"Where the figures come from: pg_stat_statements or performance_schema.events_statements_summary_by_digest"`
	OrderBy string     `json:"order_by"`
	Queries []TopQuery `json:"queries"`
}

// HealthResult is the structured result of health.
type HealthResult struct {
	CacheHitRatio *float64    `json:"cache_hit_ratio" jsonschema:"Share of page reads served from memory since the statistics were reset, 0 to 1: the database's shared buffers (postgres), the InnoDB buffer pool (mysql); null when unknown"`
	LongRunning   []Activity  `json:"long_running" jsonschema:"Statements running longer than min_seconds, longest first"`
	Blocked       []Activity  `json:"blocked" jsonschema:"Sessions waiting for a lock another session holds, with the blockers' ids"`
	Bloat         []Bloat     `json:"bloat" jsonschema:"Tables with the most reclaimable space, largest first"`
	Replication   Replication `json:"replication"`
	Notes         []string    `json:"notes,omitempty" jsonschema:"What could not be read and why (a missing privilege, a disabled schema)"`
}

// Activity is a session of health.
type Activity struct {
	ID        int64   `json:"id" jsonschema:"Server process or connection id"`
	User      string  `json:"user"`
	State     string  `json:"state,omitempty"`
	Seconds   float64 `json:"seconds" jsonschema:"How long the statement (or the lock wait) has lasted"`
	Query     string  `json:"query" jsonschema:"The statement, cut at 1000 characters"`
	WaitEvent string  `json:"wait_event,omitempty"`
	BlockedBy []int64 `json:"blocked_by,omitempty" jsonschema:"Ids of the sessions holding what it waits for"`
}

// Bloat is one table's reclaimable space in health.
type Bloat struct {
	Schema         string  `json:"schema"`
	Table          string  `json:"table"`
	TableBytes     int64   `json:"table_bytes"`
	EstimatedBytes int64   `json:"estimated_bloat_bytes" jsonschema:"Space an estimate finds reclaimable: the pages the live rows need by the planner's statistics against the table's (postgres), DATA_FREE (mysql)"`
	Ratio          float64 `json:"ratio" jsonschema:"estimated_bloat_bytes over table_bytes"`
}

// Replication is the replication state of health.
type Replication struct {
	Role       string    `json:"role" jsonschema:"primary, replica, or standalone (neither replicas nor slots)"`
	LagSeconds *float64  `json:"lag_seconds,omitempty" jsonschema:"On a replica, how far it is behind its primary"`
	Replicas   []Replica `json:"replicas,omitempty" jsonschema:"On a primary, the replicas streaming from it"`
	Slots      []RepSlot `json:"slots,omitempty" jsonschema:"Replication slots (postgres)"`
	Note       string    `json:"note,omitempty"`
}

// Replica is one replica streaming from the server.
type Replica struct {
	Name       string   `json:"name"`
	State      string   `json:"state"`
	LagSeconds *float64 `json:"lag_seconds"`
}

// RepSlot is one replication slot.
type RepSlot struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	Active        bool   `json:"active"`
	RetainedBytes *int64 `json:"retained_bytes" jsonschema:"WAL the slot keeps from being removed"`
}

package sqlbase

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// A read may call only the functions it is known to be safe to call: the
// built-in read-only functions of the dialect, and those the operator
// names in the instance's allow_functions. Any other name — an extension's
// function (crosstab, dblink_exec, xpath_table), a user's function, a
// built-in that writes, waits, locks or reaches outside the database — is
// refused before the statement reaches the server. A denylist cannot do
// this: it misses every function nobody thought of, and extensions bring
// new ones with every CREATE EXTENSION.
//
// PostgreSQL's built-in set is the server's own catalog, read once and
// kept in pg_catalog.txt (regenerated from a PostgreSQL 15 catalog by
// TestBuiltinFunctionsMatchTheCatalog in connectors/postgres with
// -update): the functions initdb creates in pg_catalog (OID below 16384,
// so nothing an extension or a superuser added later) that are immutable
// or stable in every overload, minus the vetted denials below, plus a few
// volatile ones vetted as harmless (random, clock_timestamp, the size
// functions). It is static rather than read from the server at connect
// time on purpose: a superuser can create a STABLE function in pg_catalog,
// and a stable label is its author's claim; a list fixed in the source is
// the same on every server, reviewed in every diff, and lets the guard stay
// a pure function that the fuzz target can exercise without a database. A
// function a newer server adds is refused until it is listed here or named
// in allow_functions.
//
// MySQL and MariaDB have no such catalog of their built-ins (user-defined
// functions loaded with CREATE FUNCTION … SONAME share their name space),
// so their set is the list below, written from the MariaDB 10.11 and
// MySQL 8 function references.

//go:embed pg_catalog.txt
var pgCatalogText string

// pgCatalog returns PostgreSQL's built-in functions a read may call and
// the other names of functions in pg_catalog, refused also when reached by
// attribute notation (t.pg_read_file is pg_read_file(t)): pg_catalog.txt
// ("+ name" a read may call, "- name" not, # comments) read at its first
// use, not at init, since most processes never check a PostgreSQL query.
var pgCatalog = sync.OnceValue(func() (c struct{ read, other map[string]bool }) {
	c.read, c.other = map[string]bool{}, map[string]bool{}
	for line := range strings.Lines(pgCatalogText) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "+ "):
			c.read[line[2:]] = true
		case strings.HasPrefix(line, "- "):
			c.other[line[2:]] = true
		}
	}
	return c
})

// mysqlRead are the MySQL and MariaDB built-in functions a read may call.
var mysqlRead = setOf(
	// aggregates and windows
	"avg", "bit_and", "bit_or", "bit_xor", "count", "group_concat", "json_arrayagg", "json_objectagg", "max", "min",
	"std", "stddev", "stddev_pop", "stddev_samp", "sum", "var_pop", "var_samp", "variance", "cume_dist", "dense_rank",
	"first_value", "lag", "last_value", "lead", "median", "nth_value", "ntile", "percent_rank", "percentile_cont",
	"percentile_disc", "rank", "row_number",
	// control flow, comparison, casts
	"coalesce", "greatest", "if", "ifnull", "interval", "isnull", "least", "nullif", "nvl", "nvl2", "decode_oracle",
	"strcmp", "cast", "convert", "binary",
	// strings
	"ascii", "bin", "bit_length", "char", "char_length", "character_length", "chr", "concat", "concat_ws", "elt",
	"export_set", "extractvalue", "field", "find_in_set", "format", "from_base64", "hex", "instr", "lcase",
	"left", "length", "lengthb", "like", "locate", "lower", "lpad", "ltrim", "make_set", "mid", "natural_sort_key",
	"oct", "octet_length", "ord", "position", "quote", "regexp_instr", "regexp_like", "regexp_replace", "regexp_substr",
	"repeat", "replace", "reverse", "right", "rpad", "rtrim", "sformat", "soundex", "space", "substr", "substring",
	"substring_index", "to_base64", "to_char", "trim", "trim_oracle", "ucase", "unhex", "upper", "weight_string",
	"collation", "charset", "coercibility", "match", "against",
	// numbers
	"abs", "acos", "asin", "atan", "atan2", "ceil", "ceiling", "conv", "cos", "cot", "crc32", "crc32c", "degrees",
	"div", "exp", "floor", "ln", "log", "log10", "log2", "mod", "oct", "pi", "pow", "power", "radians", "rand", "round",
	"sign", "sin", "sqrt", "tan", "truncate", "bit_count",
	// dates and times
	"adddate", "addtime", "convert_tz", "curdate", "current_date", "current_time", "current_timestamp", "curtime",
	"date", "date_add", "date_format", "date_sub", "datediff", "day", "dayname", "dayofmonth", "dayofweek", "dayofyear",
	"extract", "from_days", "from_unixtime", "get_format", "hour", "last_day", "localtime", "localtimestamp", "makedate",
	"maketime", "microsecond", "minute", "month", "monthname", "now", "period_add", "period_diff", "quarter",
	"sec_to_time", "second", "str_to_date", "subdate", "subtime", "sysdate", "time", "time_format", "time_to_sec",
	"timediff", "timestamp", "timestampadd", "timestampdiff", "to_days", "to_seconds", "unix_timestamp", "utc_date",
	"utc_time", "utc_timestamp", "week", "weekday", "weekofyear", "year", "yearweek", "add_months", "months_between",
	// JSON
	"json_array", "json_array_append", "json_array_insert", "json_array_intersect", "json_compact", "json_contains",
	"json_contains_path", "json_depth", "json_detailed", "json_equals", "json_exists", "json_extract", "json_insert",
	"json_keys", "json_length", "json_loose", "json_merge", "json_merge_patch", "json_merge_preserve",
	"json_normalize", "json_object", "json_object_filter_keys", "json_object_to_array", "json_overlaps", "json_pretty",
	"json_query", "json_quote", "json_remove", "json_replace", "json_schema_valid", "json_search", "json_set",
	"json_table", "json_type", "json_unquote", "json_valid", "json_value", "member", "columns",
	// hashes, encodings, identifiers
	"aes_decrypt", "aes_encrypt", "compress", "md5", "sha", "sha1", "sha2", "uncompress", "uncompressed_length",
	"uuid", "uuid_short", "sys_guid", "inet_aton", "inet_ntoa", "inet6_aton", "inet6_ntoa", "is_ipv4",
	"is_ipv4_compat", "is_ipv4_mapped", "is_ipv6", "random_bytes", "kdf",
	// information about the session and server (reads only)
	"charset", "connection_id", "current_role", "current_user", "database", "found_rows", "row_count", "schema",
	"session_user", "system_user", "user", "version", "default",
	// dynamic columns
	"column_check", "column_create", "column_exists", "column_get", "column_json", "column_list",
)

// deniedFuncs are functions refused in every statement, whatever the
// schema, the quoting or the instance's allow_functions: they read or write
// server files, run programs, run statements given as text (which the guard
// cannot see into), change settings, open connections, take locks, wait,
// or signal other sessions. A superuser may call them inside a READ ONLY
// transaction, so they must never reach the server. Names are matched
// lower-case.
var deniedFuncs = map[Dialect]map[string]bool{
	Postgres: setOf("set_config", "nextval", "setval", "currval", "lastval", "pg_read_file", "pg_read_binary_file",
		"pg_stat_file", "pg_logdir_ls", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
		"pg_promote", "pg_switch_wal", "pg_start_backup", "pg_stop_backup", "pg_notify", "pg_import_system_collations",
		"pg_log_backend_memory_contexts", "pg_wal_replay_pause", "pg_wal_replay_resume", "pg_drop_replication_slot",
		"pg_current_xact_id", "txid_current", "loread", "lowrite", "pg_sleep", "pg_sleep_for", "pg_sleep_until",
		"pg_hba_file_rules", "pg_ident_file_mappings", "pg_show_all_file_settings", "pg_current_logfile",
		// ts_stat, ts_rewrite, crosstab, connectby and xpath_table (tablefunc,
		// xml2) run the query text they are given; xslt_process reads
		// documents it is pointed at.
		"ts_stat", "ts_rewrite", "connectby", "xpath_table", "xslt_process"),
	MySQL: setOf("load_file", "sys_exec", "sys_eval", "sys_get", "sys_set", "get_lock", "release_lock",
		"release_all_locks", "is_free_lock", "is_used_lock", "master_pos_wait", "source_pos_wait", "master_gtid_wait",
		"nextval", "setval", "lastval", "last_insert_id", "sleep", "benchmark",
		"wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids"),
}

// deniedPrefixes are families of functions refused as deniedFuncs are.
var deniedPrefixes = map[Dialect][]string{
	Postgres: {"pg_ls_", "pg_read_", "pg_file_", "lo_", "dblink", "pg_advisory", "pg_try_advisory", "pg_create_",
		"pg_replication_origin", "pg_logical_", "binary_upgrade_", "pg_backup_", "pg_stat_reset", "pg_stat_statements_reset",
		"pg_background", "pg_copy_", "pg_replication_slot", "brin_", "gin_clean_pending_list", "crosstab",
		"query_to_xml", "table_to_xml", "cursor_to_xml", "database_to_xml", "schema_to_xml", "pg_wal_replay_"},
	MySQL: {"sys_"},
}

// FunctionDenied reports whether name (lower-case) is a function the guard
// refuses in every statement of dialect d, whatever allow_functions says.
func FunctionDenied(d Dialect, name string) bool {
	if deniedFuncs[d][name] {
		return true
	}
	for _, p := range deniedPrefixes[d] {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Funcs are the functions an operator allows reads to call beyond the
// built-in ones: allow_functions.
type Funcs struct {
	bare      map[string]bool // "name": any schema, or none
	qualified map[string]bool // "schema.name": that schema only
}

var funcName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$`)
})

// NewFuncs checks an allow_functions list: each entry a function name,
// optionally schema.name, read as unquoted identifiers are (lower-case);
// none a function the guard always refuses. Errors name the entry.
func NewFuncs(d Dialect, names []string) (*Funcs, []error) {
	f := &Funcs{bare: map[string]bool{}, qualified: map[string]bool{}}
	var errs []error
	for i, n := range names {
		if !funcName().MatchString(n) {
			errs = append(errs, fmt.Errorf("entry %d (%q) must be a function name of letters, digits and underscores, optionally schema.name", i, n))
			continue
		}
		n = strings.ToLower(n)
		base := n[strings.IndexByte(n, '.')+1:]
		if FunctionDenied(d, base) {
			errs = append(errs, fmt.Errorf("entry %d (%q) is a function that reaches outside the database, runs SQL given as text, locks, waits or signals other sessions: it cannot be allowed", i, n))
			continue
		}
		if base == n {
			f.bare[n] = true
		} else {
			f.qualified[n] = true
		}
	}
	return f, errs
}

// allows reports whether the operator allowed name in schema ("" when
// unqualified).
func (f *Funcs) allows(schema, name string) bool {
	if f == nil {
		return false
	}
	return f.bare[name] || schema != "" && f.qualified[schema+"."+name]
}

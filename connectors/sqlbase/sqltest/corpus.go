package sqltest

import (
	"strings"

	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// Outcome is what a bypass case must give through query.
type Outcome int

// The outcomes of a bypass case.
const (
	// Refused: the guard refuses it (INVALID_ARGUMENT before any I/O).
	Refused Outcome = iota + 1
	// Read: it runs, as the harmless read it is.
	Read
	// Failed: the server refuses or stops it (an error with a code).
	Failed
	// Either: any outcome; only that nothing changed is asserted.
	Either
)

// Case is one attempt to write, escape or hang through the read tool.
// {canary} stands for the canary table, {file} for a path that must
// never appear, {prog} for a program that would create {file}.
type Case struct {
	Name    string
	SQL     string
	Outcome Outcome
}

// Bypasses returns the bypass corpus of dialect d.
func Bypasses(d sqlbase.Dialect) []Case {
	if d == sqlbase.MySQL {
		return append(common(), mysqlCases...)
	}
	return append(common(), postgresCases...)
}

func common() []Case {
	return []Case{
		{"commit then insert", "COMMIT; INSERT INTO {canary} (id, v) VALUES (999, 'x')", Refused},
		{"select then insert", "SELECT 1; INSERT INTO {canary} (id, v) VALUES (999, 'x')", Refused},
		{"select then delete, no space", "SELECT 1;DELETE FROM {canary}", Refused},
		{"rollback first", "ROLLBACK; DELETE FROM {canary}", Refused},
		{"plain insert", "INSERT INTO {canary} (id, v) VALUES (999, 'x')", Refused},
		{"plain delete", "DELETE FROM {canary}", Refused},
		{"update", "UPDATE {canary} SET v = 'pwned'", Refused},
		{"drop", "DROP TABLE {canary}", Refused},
		{"truncate", "TRUNCATE {canary}", Refused},
		{"create table", "CREATE TABLE legate_pwned (x int)", Refused},
		{"select into new table", "SELECT * INTO legate_pwned FROM {canary}", Refused},
		{"call", "CALL legate_proc()", Refused},
		{"prepare", "PREPARE p AS DELETE FROM {canary}", Refused},
		{"execute", "EXECUTE p", Refused},
		{"set", "SET transaction_read_only = off", Refused},
		{"for update", "SELECT * FROM {canary} FOR UPDATE", Refused},
		{"block comment hides semicolon", "SELECT 1 /* ; */", Read},
		{"line comment hides semicolon and delete", "SELECT 1 -- ; DELETE FROM {canary}\n", Read},
		{"comment then chained delete", "SELECT 1 /* x */; DELETE FROM {canary}", Refused},
		{"comment before keyword", "/* SELECT */ DELETE FROM {canary}", Refused},
		{"comment splits keyword", "DEL/**/ETE FROM {canary}", Refused},
		{"comment inside select", "SELECT/**/count(*)/**/FROM/**/{canary}", Read},
		{"string hides drop", "SELECT 'DROP TABLE {canary}'", Read},
		{"string hides semicolon and delete", "SELECT 'a; DELETE FROM {canary}'", Read},
		{"string hides comment opener", "SELECT '/*', v FROM {canary} WHERE id = 1", Read},
		{"doubled quote", "SELECT 'it''s; DELETE FROM {canary}'", Read},
		{"quoted identifier hides keyword", `SELECT 1 AS "delete; drop"`, Either},
		{"unterminated string", "SELECT 'abc", Refused},
		{"unterminated comment", "SELECT 1 /* never closed", Refused},
		{"trailing semicolon", "SELECT count(*) FROM {canary};", Read},
		{"trailing semicolons and comment", "SELECT count(*) FROM {canary}; ; -- done", Read},
		{"nul byte", "SELECT 1\x00; DELETE FROM {canary}", Refused},
		{"union read", "SELECT id FROM {canary} UNION ALL SELECT 2", Read},
		{"parenthesised select", "(SELECT id FROM {canary}) UNION (SELECT 3)", Read},
		{"begin", "BEGIN; DELETE FROM {canary}; COMMIT", Refused},
		{"lock table", "LOCK TABLE {canary}", Refused},
		// What explain is handed: its statement passes the same guard.
		{"explain analyze of a delete", "EXPLAIN ANALYZE DELETE FROM {canary}", Refused},
		{"explain inside explain", "EXPLAIN SELECT 1", Refused},
		{"analyze statement", "ANALYZE {canary}", Refused},
		{"select then explain analyze delete", "SELECT 1; EXPLAIN ANALYZE DELETE FROM {canary}", Refused},
	}
}

var postgresCases = []Case{
	{"writable cte", "WITH d AS (DELETE FROM {canary} RETURNING *) SELECT count(*) FROM d", Refused},
	{"writable cte insert", "WITH i AS (INSERT INTO {canary} (id, v) VALUES (998, 'x') RETURNING id) SELECT * FROM i", Refused},
	{"nextval", "SELECT nextval('{canary}_id_seq')", Refused},
	{"nextval qualified and quoted", `SELECT pg_catalog."nextval"('{canary}_id_seq')`, Refused},
	{"setval", "SELECT setval('{canary}_id_seq', 1000)", Refused},
	{"set_config read only off", "SELECT set_config('transaction_read_only', 'off', true)", Refused},
	{"set_config then insert", "SELECT set_config('transaction_read_only','off',false); INSERT INTO {canary} (id, v) VALUES (997, 'x')", Refused},
	{"copy to program", "COPY (SELECT 1) TO PROGRAM '{prog}'", Refused},
	{"copy to file", "COPY {canary} TO '{file}'", Refused},
	{"select then copy to program", "SELECT 1; COPY (SELECT 1) TO PROGRAM '{prog}'", Refused},
	{"dblink_exec", "SELECT dblink_exec('dbname=postgres', 'CREATE TABLE legate_pwned (x int)')", Refused},
	{"dblink", "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)", Refused},
	{"lo_export", "SELECT lo_export(lo_from_bytea(0, 'x'::bytea), '{file}')", Refused},
	{"copy to file query", "COPY (SELECT * FROM {canary}) TO '{file}'", Refused},
	{"lo_import", "SELECT lo_import('/etc/hostname')", Refused},
	{"pg_read_file", "SELECT pg_read_file('/etc/passwd')", Refused},
	{"pg_read_file quoted", `SELECT "pg_read_file"('/etc/passwd')`, Refused},
	{"pg_read_file spelled with unicode escapes", `SELECT U&"pg\005fread\005ffile"('/etc/passwd')`, Refused},
	{"set_config spelled with unicode escapes", `SELECT U&"set\005fconfig"('transaction_read_only', 'off', true)`, Refused},
	{"unicode escape with its own escape char", `SELECT U&"lo!005fexport" UESCAPE '!' (lo_from_bytea(0, 'x'::bytea), '{file}')`, Refused},
	{"ts_stat runs a query given as text", `SELECT * FROM ts_stat('SELECT to_tsvector(lo_export(lo_from_bytea(0, ''x''::bytea), ''{file}'')::text)')`, Refused},
	{"ts_rewrite runs a query given as text", `SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, pg_read_file(''/etc/passwd'')::tsquery')`, Refused},
	{"pg_read_binary_file", "SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", Refused},
	{"pg_ls_dir", "SELECT * FROM pg_ls_dir('/')", Refused},
	{"query_to_xml runs a statement", "SELECT query_to_xml('DELETE FROM {canary} RETURNING 1', true, true, '')", Refused},
	{"pg_terminate_backend", "SELECT pg_terminate_backend(pg_backend_pid())", Refused},
	{"advisory lock", "SELECT pg_advisory_lock(1)", Refused},
	{"do block", "DO $$BEGIN DELETE FROM {canary}; END$$", Refused},
	{"do block after select", "SELECT 1; DO $$BEGIN DELETE FROM {canary}; END$$", Refused},
	{"dollar quote hides semicolon", "SELECT $$; DELETE FROM {canary}$$", Read},
	{"tagged dollar quote hides keyword", "SELECT $x$ DROP TABLE {canary}; $x$ AS s", Read},
	{"dollar quote hides end of comment", "SELECT $$*/$$, 1", Read},
	{"nested comments", "SELECT 1 /* outer /* inner */ still comment; DELETE FROM {canary} */", Read},
	{"nested comment closes early in mysql reading", "SELECT 1 /* /* */ ; DELETE FROM {canary} */", Read},
	{"escape string hides quote", `SELECT E'\'; DELETE FROM {canary}; --'`, Read},
	{"standard string backslash", `SELECT 'a\'; DELETE FROM {canary}; --'`, Refused},
	{"call procedure", "CALL pg_catalog.legate_nothing()", Refused},
	{"prepare and execute chained", "PREPARE x AS SELECT 1; EXECUTE x", Refused},
	{"create temp table", "CREATE TEMP TABLE t AS SELECT 1", Refused},
	{"long pg_sleep", "SELECT pg_sleep(30)", Refused},
	{"pg_sleep in cte", "WITH s AS (SELECT pg_sleep(30)) SELECT * FROM s", Refused},
	{"long series", "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b", Failed},
	{"listen", "LISTEN legate", Refused},
	{"notify", "SELECT pg_notify('legate', 'x')", Refused},
	{"vacuum", "VACUUM {canary}", Refused},
	{"select for share", "SELECT * FROM {canary} FOR SHARE", Failed},
	{"txid", "SELECT txid_current()", Refused},
	{"explain analyze delete", "EXPLAIN ANALYZE DELETE FROM {canary}", Refused},
	{"values", "VALUES (1)", Refused},
	{"table command", "TABLE {canary}", Refused},
	{"unicode escape string", `SELECT U&'\0041; DELETE'`, Read},
	{"function in from with chaining", "SELECT * FROM generate_series(1,2); SELECT 1", Refused},
	{"merge", "MERGE INTO {canary} c USING (SELECT 1 AS id) s ON c.id = s.id WHEN MATCHED THEN DELETE", Refused},
	// Functions that run SQL given as text, in extensions the guard cannot
	// see into (tablefunc, dblink, xml2), and built-ins that wait, lock or
	// signal: each passed the function denylist the allowlist replaced.
	{"crosstab reads a server file", "SELECT * FROM crosstab('SELECT 1::text, 1::text, pg_read_file(''/etc/hostname'')') AS t(r text, c text)", Refused},
	{"crosstab runs dblink_exec delete", "SELECT * FROM crosstab('SELECT 1::text, 1::text, dblink_exec(''dbname='' || current_database(), ''DELETE FROM {canary}'')') AS t(r text, c text)", Refused},
	{"crosstab qualified", "SELECT * FROM public.crosstab('SELECT 1::text, 1::text, pg_read_file(''/etc/hostname'')') AS t(r text, c text)", Refused},
	{"crosstab quoted", `SELECT * FROM "crosstab"('SELECT 1::text, 1::text, 1::text') AS t(r text, c text)`, Refused},
	{"crosstab upper case", "SELECT * FROM CROSSTAB('SELECT 1::text, 1::text, 1::text') AS t(r text, c text)", Refused},
	{"crosstab quoted schema and name", `SELECT * FROM "public"."crosstab"('SELECT 1::text, 1::text, 1::text') AS t(r text, c text)`, Refused},
	{"crosstab2", "SELECT * FROM crosstab2('SELECT ''a''::text, ''b''::text, ''c''::text')", Refused},
	{"crosstab unicode escaped", `SELECT * FROM U&"crossta\0062"('SELECT 1::text, 1::text, 1::text') AS t(r text, c text)`, Refused},
	{"connectby runs a query on a named table", "SELECT * FROM connectby('{canary}', 'id', 'id', '1', 0) AS t(a int, b int, l int)", Refused},
	{"normal_rand is an extension function", "SELECT * FROM normal_rand(3, 0, 1)", Refused},
	{"xpath_table runs a query", "SELECT * FROM xpath_table('id', 'v', '{canary}', '/a', 'true') AS t(id int, a text)", Refused},
	{"dblink_exec deletes", "SELECT dblink_exec('dbname=' || current_database(), 'DELETE FROM {canary}')", Refused},
	{"dblink_exec qualified and quoted", `SELECT "public".DBLINK_EXEC('dbname=' || current_database(), 'DELETE FROM {canary}')`, Refused},
	{"pg_cancel_backend", "SELECT pg_cancel_backend(pg_backend_pid())", Refused},
	{"pg_advisory_lock qualified", "SELECT pg_catalog.pg_advisory_lock(1)", Refused},
	{"pg_try_advisory_xact_lock", "SELECT pg_try_advisory_xact_lock(1)", Refused},
	{"pg_read_file by attribute notation", "SELECT ('/etc/hostname'::text).pg_read_file", Refused},
	{"pg_read_file by attribute notation on an alias", "SELECT t.pg_read_file FROM unnest(ARRAY['/etc/hostname']) AS t", Refused},
	{"pg_sleep by attribute notation", "SELECT (30::float8).pg_sleep", Refused},
	{"built-in name in another schema", "SELECT public.lower('A')", Refused},
	{"quoted name in another case", `SELECT "LOWER"('A')`, Refused},
	{"current_setting is a read", "SELECT current_setting('server_version_num')", Read},
	{"table_to_xml reads a table by name", "SELECT table_to_xml('{canary}', true, true, '')", Refused},
	{"database_to_xml", "SELECT database_to_xml(true, true, '')", Refused},
	{"pg_current_xact_id", "SELECT pg_current_xact_id()", Refused},
	{"lo_get", "SELECT lo_get(1)", Refused},
	{"copy to program id", "COPY (SELECT 1) TO PROGRAM 'id'", Refused},
	{"pg_hba_file_rules reads a file", "SELECT * FROM pg_hba_file_rules()", Refused},
	{"user function in public", "SELECT legate_nothing()", Refused},
	{"explain options of a delete", "EXPLAIN (ANALYZE, FORMAT JSON) DELETE FROM {canary}", Refused},
	{"explained writable CTE", "WITH d AS (DELETE FROM {canary} RETURNING id) SELECT count(*) FROM d", Refused},
	{"explained file read", "SELECT pg_read_file('/etc/hostname')", Refused},
	{"explained sequence step", "SELECT nextval('{canary}_id_seq')", Refused},
	{"explained settings change", "SELECT set_config('transaction_read_only', 'off', true)", Refused},
	{"function behind an unquoted alias", "SELECT * FROM {canary} pg_sleep(1)", Refused},
	{"built-ins read", "SELECT count(*), sum(id), coalesce(max(v), ''), lower(min(v)), to_char(now(), 'YYYY'), date_trunc('day', now()) < now() + interval '1 day', extract(year FROM now()) > 2000, jsonb_build_object('n', count(*)), string_agg(v, ',' ORDER BY id) FILTER (WHERE id < 3), pg_catalog.length('x'), pg_typeof(1)::text FROM {canary} WHERE id = ANY(ARRAY[1, 2]) AND EXISTS (SELECT 1) AND v LIKE 'row%'", Read},
	{"typed and aliased read", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3), s AS MATERIALIZED (SELECT 2 AS n) SELECT g.x::numeric(10, 2), CAST(g.x AS varchar(10)), r.n, row_number() OVER (ORDER BY g.x) FROM generate_series(1, 3) AS g(x) JOIN r ON r.n = g.x, (SELECT 1) sub(y), s", Read},
}

var mysqlCases = []Case{
	{"into outfile", "SELECT * FROM {canary} INTO OUTFILE '{file}'", Refused},
	{"into dumpfile", "SELECT v FROM {canary} LIMIT 1 INTO DUMPFILE '{file}'", Refused},
	{"into variable", "SELECT v INTO @x FROM {canary} LIMIT 1", Refused},
	{"outfile after union", "SELECT 1 UNION SELECT 2 INTO OUTFILE '{file}'", Refused},
	{"load_file", "SELECT LOAD_FILE('/etc/passwd')", Refused},
	{"executable comment", "SELECT 1 /*! ; DELETE FROM {canary} */", Refused},
	{"mariadb executable comment", "SELECT 1 /*M! INTO OUTFILE '{file}' */", Refused},
	{"hash comment hides chaining", "SELECT 1 # ; DELETE FROM {canary}\n", Read},
	{"dash dash without space is not a comment", "SELECT 1 --1; DELETE FROM {canary}", Refused},
	{"non-nesting comment", "SELECT 1 /* /* */ ; DELETE FROM {canary} */", Refused},
	{"backslash escape hides quote", `SELECT 'a\'; DELETE FROM {canary}; #'`, Read},
	{"double-quoted string hides keyword", `SELECT "DROP TABLE {canary}"`, Read},
	{"backtick identifier", "SELECT 1 AS `delete; drop`", Read},
	{"replace", "REPLACE INTO {canary} (id, v) VALUES (1, 'x')", Refused},
	{"handler", "HANDLER {canary} OPEN", Refused},
	{"lock in share mode", "SELECT * FROM {canary} LOCK IN SHARE MODE", Refused},
	{"variable assignment", "SELECT @a := 1", Refused},
	{"get_lock", "SELECT GET_LOCK('legate', 1)", Refused},
	{"create temporary table", "CREATE TEMPORARY TABLE t (x int)", Refused},
	{"nextval on sequence", "SELECT NEXTVAL({canary}_seq)", Refused},
	{"next value for", "SELECT NEXT VALUE FOR {canary}_seq", Refused},
	{"next value for in a subquery", "SELECT (SELECT NEXT VALUE FOR {canary}_seq) AS n", Refused},
	{"long sleep", "SELECT SLEEP(30)", Refused},
	{"long benchmark", "SELECT BENCHMARK(10000000000, MD5('x'))", Refused},
	{"release_lock", "SELECT RELEASE_LOCK('legate')", Refused},
	{"is_free_lock", "SELECT IS_FREE_LOCK('legate')", Refused},
	{"udf sys_exec", "SELECT sys_exec('touch {file}')", Refused},
	{"unknown udf", "SELECT do_system('touch {file}')", Refused},
	{"stored function qualified", "SELECT mysql.legate_nothing(1)", Refused},
	{"load_file in order by after rollup", "SELECT id FROM {canary} GROUP BY id WITH ROLLUP ORDER BY id, LOAD_FILE('/etc/passwd')", Refused},
	{"load_file quoted", "SELECT `load_file`('/etc/passwd')", Refused},
	{"load_file after a closing parenthesis", "SELECT (1) LOAD_FILE('/etc/passwd')", Refused},
	{"builtins read", "SELECT CONCAT(UPPER(v), LPAD(id, 5, '0')), COALESCE(NULL, 1), IF(id > 1, 'a', 'b'), CAST(id AS CHAR(10)), CONVERT(id, DECIMAL(10,2)), DATE_FORMAT(NOW(), '%Y'), JSON_OBJECT('k', id) FROM {canary} WHERE id IN (1, 2) AND EXISTS (SELECT 1)", Read},
	{"window and cte read", "WITH c(n) AS (SELECT id FROM {canary}) SELECT n, ROW_NUMBER() OVER (ORDER BY n) FROM c LIMIT 3", Read},
	{"long join", "SELECT COUNT(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq + b.seq = 7", Failed},
	{"do statement", "DO (SELECT 1)", Refused},
	{"call procedure", "CALL legate_proc()", Refused},
	{"analyze format json of a delete", "ANALYZE FORMAT=JSON DELETE FROM {canary}", Refused},
	{"explain format json of a delete", "EXPLAIN FORMAT=JSON DELETE FROM {canary}", Refused},
	{"explained file read", "SELECT LOAD_FILE('/etc/hostname')", Refused},
	{"set statement", "SET STATEMENT max_statement_time=1000 FOR DELETE FROM {canary}", Refused},
	{"prepare from string", "PREPARE s FROM 'DELETE FROM {canary}'", Refused},
	{"select procedure analyse", "SELECT * FROM {canary} PROCEDURE ANALYSE()", Refused},
	{"with recursive read", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT count(*) FROM r", Read},
}

// Seeds are statements for the guard's fuzz targets: the corpus of both
// dialects with its placeholders filled, and ordinary reads and writes.
func Seeds() []string {
	var out []string
	for _, d := range []sqlbase.Dialect{sqlbase.Postgres, sqlbase.MySQL} {
		for _, c := range Bypasses(d) {
			out = append(out, Fill(c.SQL, "legate_canary", "/tmp/legate-fuzz-never"))
		}
	}
	return append(out,
		"SELECT id, v FROM legate_canary WHERE id > $1 ORDER BY id",
		"SELECT id, v FROM legate_canary WHERE id > ? ORDER BY id",
		"WITH a AS (SELECT 1 AS x) SELECT x FROM a",
		"INSERT INTO t (a, b) VALUES ($1, $2)",
		"UPDATE t SET a = ? WHERE id = ?",
		"SELECT ''''",
		"SELECT $a$ $b$ $a$",
		"SELECT 1e5, .5, 1.5e-3, 0x1F, x'ff', b'01', n'x', _utf8mb4'x'",
		"SELECT a::text, b->>'k', c ? 'x' FROM t",
	)
}

// Fill replaces a case's placeholders.
func Fill(sql, canary, file string) string {
	return strings.NewReplacer("{canary}", canary, "{file}", file, "{prog}", "touch "+file).Replace(sql)
}

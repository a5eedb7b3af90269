// Package postgres is the "postgres" connector: guarded reads, idempotent
// writes and the schema of a PostgreSQL database, over pgx.
//
// Every statement goes over the extended protocol (pgx's
// QueryExecModeCacheDescribe, given on each call: never Exec without
// arguments, which pgx sends over the simple protocol that runs several
// statements), so the server itself refuses a second statement. Reads run
// in a READ ONLY transaction with statement_timeout and search_path set
// locally, after the guard in connectors/sqlbase. Writes record their
// operation key in an operation table in the same transaction.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/postgres/inspect"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// Config is a postgres instance's configuration.
type Config struct {
	// DSN is the connection as one string, instead of host, port,
	// database and user.
	DSN      string `yaml:"dsn" desc:"The connection as one string instead of host, port, database and user: a postgres:// or postgresql:// URL or a keyword/value string (host=… dbname=… user=…); its own sslmode, sslrootcert and other settings apply. It may not carry a password: give that as the password credential" example:"postgres://legate_reader@db.internal:5432/app?sslmode=verify-full"`
	Host     string `yaml:"host" desc:"Server host name or address (default 127.0.0.1 unless dsn is given)"`
	Port     int    `yaml:"port" desc:"Server port (default 5432 unless dsn is given)"`
	Database string `yaml:"database" desc:"Database to connect to (required unless dsn is given)" example:"app"`
	User     string `yaml:"user" desc:"Role to connect as (required unless dsn is given); give query-only instances a read-only role (README)" example:"legate_reader"`
	SSLMode  string `yaml:"sslmode" default:"prefer" enum:"disable,allow,prefer,require,verify-ca,verify-full" desc:"TLS mode, as libpq's sslmode: disable, allow, prefer, require, verify-ca or verify-full (with dsn, the DSN's own applies)"`
	// SSLRootCert is a CA bundle for verify-ca and verify-full.
	SSLRootCert     string   `yaml:"sslrootcert" desc:"Path of the PEM CA certificates that verify the server (verify-ca, verify-full)"`
	ApplicationName string   `yaml:"application_name" default:"legate" desc:"application_name the server shows for the instance's sessions"`
	Schemas         []string `yaml:"schemas" desc:"Schemas that schema lists and that are the search_path of queries (default: public); access itself is what the role is granted"`
	ReadOnly        bool     `yaml:"read_only" default:"false" desc:"Offer only the read tools, not execute; the instance refuses to start on a superuser role or one holding pg_execute_server_program, pg_read_server_files or pg_write_server_files (see allow_privileged_role)"`
	// AllowFunctions extends the guard's allowlist of functions.
	AllowFunctions []string `yaml:"allow_functions" desc:"Functions query may call beyond PostgreSQL's built-in read-only ones: name (any schema) or schema.name, e.g. an extension's or your own; functions that run SQL given as text or reach files, programs, settings or other sessions (crosstab, dblink_exec, pg_read_file …) cannot be allowed" example:"[public.similarity]"`
	// Toolsets selects the groups of tools the instance offers.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: query (default), inspect (default), diagnostics (default)\" example:\"[query, inspect]\""
	// AllowExplainAnalyze lets explain run the statement it plans.
	AllowExplainAnalyze bool `yaml:"allow_explain_analyze" default:"false" desc:"Let explain take analyze: true, which runs the statement (EXPLAIN ANALYZE) to report actual times and rows; it runs inside the READ ONLY transaction under statement_timeout, but it does run the query"`
	// AllowPrivilegedRole lets a read_only instance start on a privileged role.
	AllowPrivilegedRole bool `yaml:"allow_privileged_role" default:"false" desc:"Let a read_only instance start although its role is a superuser or holds pg_execute_server_program, pg_read_server_files or pg_write_server_files; each start then logs a warning naming the role and the privilege"`
	// StatementTimeout bounds each statement on the server.
	StatementTimeout legate.Duration `yaml:"statement_timeout" default:"10s" desc:"statement_timeout of each query and write"`
	ConnectTimeout   legate.Duration `yaml:"connect_timeout" default:"5s" desc:"Time limit of opening one connection"`
	DefaultRows      int             `yaml:"default_rows" default:"100" desc:"Rows of a query page when the call gives no limit"`
	MaxRows          int             `yaml:"max_rows" default:"1000" desc:"Most rows of a query page (at most 1000)"`
	MaxResultBytes   int             `yaml:"max_result_bytes" default:"4194304" desc:"Most bytes of a query page's rows, measured as JSON roughly; a page is cut before the row that would pass it (truncated), and a single row past it is refused"`
	MaxConns         int             `yaml:"max_conns" default:"4" desc:"Most open connections of the instance"`
	OperationTable   string          `yaml:"operation_table" default:"legate_operations" desc:"Table (optionally schema.table) recording the operation key of each execute, written in the write's transaction; created when missing if the role may (README has its DDL)"`
	WriteAttempts    int             `yaml:"write_attempts" default:"3" desc:"Transactions one execute may take when the server reports a serialization failure or deadlock (1 to 10)"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "postgres",
		Description: "Query (read-only, guarded), write (idempotent) and describe a PostgreSQL database",
		Credentials: []connectors.Credential{
			{Name: "password", Description: "Password of the configured user (optional with trust or certificate authentication)"},
		},
	}, New))
}

// Connector is one postgres instance.
type Connector struct {
	id      string
	cfg     Config
	tools   []connectors.Tool
	catalog []connectors.Tool // every tool of the type, each with its toolset
	selErr  error

	mu     sync.Mutex
	pool   *pgxpool.Pool
	poolPW string // the password the pool was built with

	opOnce  sync.Mutex
	opReady bool // the operation table exists

	types sync.Map // OID → type name of types pgx does not know

	allow     *sqlbase.Funcs // allow_functions
	allowErrs []error
}

// New builds an instance from its decoded config.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{id: inst.ID, cfg: *cfg}
	if c.cfg.DSN == "" {
		c.cfg.Host = cmp.Or(c.cfg.Host, "127.0.0.1")
		c.cfg.Port = cmp.Or(c.cfg.Port, 5432)
	}
	if len(c.cfg.Schemas) == 0 {
		c.cfg.Schemas = []string{"public"}
	}
	c.allow, c.allowErrs = sqlbase.NewFuncs(sqlbase.Postgres, c.cfg.AllowFunctions)
	c.tools = sqlbase.Tools(c, sqlbase.Options{
		AllowFunctions: c.allow,
		Dialect:        sqlbase.Postgres, Type: "postgres", Instance: inst.ID,
		DefaultRows: c.cfg.DefaultRows, MaxRows: c.cfg.MaxRows, Timeout: time.Duration(c.cfg.StatementTimeout),
		Schemas: c.cfg.Schemas, Attempts: c.cfg.WriteAttempts,
		OperationTable: c.cfg.OperationTable, MaxResultBytes: c.cfg.MaxResultBytes,
	})
	c.catalog = sqlbase.WithToolsets(append(c.tools, inspect.Tools(c, inspect.Options{
		Schemas: c.cfg.Schemas, DefaultRows: c.cfg.DefaultRows, MaxRows: c.cfg.MaxRows, MaxResultBytes: c.cfg.MaxResultBytes,
		Timeout: time.Duration(c.cfg.StatementTimeout), AllowAnalyze: c.cfg.AllowExplainAnalyze, AllowFunctions: c.allow,
	})...))
	c.tools, c.selErr = connectors.SelectTools("postgres", sqlbase.Toolsets, c.cfg.Toolsets, c.cfg.ReadOnly, c.catalog)
	return c, nil
}

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	errs := sqlbase.ValidateCommon(sqlbase.Common{
		DSN: c.cfg.DSN, Host: c.cfg.Host, Port: c.cfg.Port, Database: c.cfg.Database, User: c.cfg.User, Schemas: c.cfg.Schemas,
		StatementTimeout: c.cfg.StatementTimeout, ConnectTimeout: c.cfg.ConnectTimeout, DefaultRows: c.cfg.DefaultRows,
		MaxRows: c.cfg.MaxRows, MaxResultBytes: c.cfg.MaxResultBytes, MaxConns: c.cfg.MaxConns, OperationTable: c.cfg.OperationTable, WriteAttempts: c.cfg.WriteAttempts,
	})
	for _, err := range c.allowErrs {
		errs = append(errs, legate.Invalid("allow_functions", "%v", err))
	}
	if c.selErr != nil {
		errs = append(errs, c.selErr)
	}
	if c.cfg.DSN != "" {
		if err := checkDSN(c.cfg.DSN); err != nil {
			errs = append(errs, err)
		}
	}
	if !slices.Contains(sslModes, c.cfg.SSLMode) {
		errs = append(errs, legate.Invalid("sslmode", "must be one of %s, not %q", strings.Join(sslModes, ", "), c.cfg.SSLMode))
	}
	return errors.Join(errs...)
}

var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// Test connects with the credentials, pings, and reports the server's
// version.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	pool, err := c.connect(ctx, creds)
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return mapError(err)
	}
	defer conn.Release()
	if err := conn.Ping(ctx); err != nil {
		return mapError(err)
	}
	if v := conn.Conn().PgConn().ParameterStatus("server_version"); v != "" {
		connectors.ReportServerVersion(ctx, "PostgreSQL "+v)
	}
	return nil
}

// AdapterVersion is the version of the postgres connector's own code.
const AdapterVersion = "1.0.0"

// Describe says the connector's version; the server's own is what its
// connection test reads.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion}
}

var _ connectors.Describer = (*Connector)(nil)

// Tools lists the tools of the instance's toolsets (execute not when
// read_only).
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// ToolCatalog lists every tool of the type, whatever the config selects.
func (c *Connector) ToolCatalog() []connectors.Tool { return c.catalog }

// Close closes the instance's connections.
func (c *Connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool != nil {
		c.pool.Close()
		c.pool = nil
	}
	return nil
}

// connect returns the pool for the password the credentials give now: a
// rotated password replaces the pool (the old one closes once its
// connections are returned).
func (c *Connector) connect(ctx context.Context, creds connectors.Credentials) (*pgxpool.Pool, error) {
	pw := ""
	if creds != nil && creds.Has("password") {
		v, err := creds.Get(ctx, "password")
		if err != nil {
			return nil, connectors.CredentialError("postgres", "password", err)
		}
		pw = v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool != nil && c.poolPW == pw {
		return c.pool, nil
	}
	dsn := cmp.Or(c.cfg.DSN, c.connString())
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "postgres: connection settings: %v", err)
	}
	if c.cfg.DSN != "" {
		if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
			cfg.ConnConfig.RuntimeParams["application_name"] = c.cfg.ApplicationName
		}
		if cfg.ConnConfig.ConnectTimeout == 0 {
			cfg.ConnConfig.ConnectTimeout = time.Duration(c.cfg.ConnectTimeout)
		}
	}
	cfg.ConnConfig.Password = pw
	// Statements are described once per connection, not prepared: reads
	// are as varied as the questions asked, and a pooler in transaction
	// mode (PgBouncer) keeps no prepared statement. A DSN's own
	// default_query_exec_mode stands.
	if !strings.Contains(dsn, "default_query_exec_mode") {
		cfg.ConnConfig.DefaultQueryExecMode = extended
	}
	// numeric comes as text: its exact digits are the JSON number, with no
	// detour through big integers, in a pipelined read too (a batch takes
	// no per-query result formats).
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		conn.TypeMap().RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: textNumeric{}})
		return nil
	}
	// The guard reads strings as standard SQL; pin the server to it.
	cfg.ConnConfig.RuntimeParams["standard_conforming_strings"] = "on"
	cfg.MaxConns = int32(c.cfg.MaxConns)
	pool, err := pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, mapError(err)
	}
	if c.cfg.ReadOnly {
		if err := c.checkRole(ctx, pool); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if old := c.pool; old != nil {
		go old.Close()
	}
	c.pool, c.poolPW = pool, pw
	return pool, nil
}

// checkRole refuses a read_only instance whose role is a superuser or may
// run server programs or read or write server files, unless
// allow_privileged_role (sqlbase.CheckPrivileged): it runs on each new
// pool, the instance's start and each password rotation.
func (c *Connector) checkRole(ctx context.Context, pool *pgxpool.Pool) error {
	var role string
	var super, program, read, write bool
	err := pool.QueryRow(ctx, `SELECT current_user, r.rolsuper,
		pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER'),
		pg_has_role(current_user, 'pg_read_server_files', 'MEMBER'),
		pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
		FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`, extended).Scan(&role, &super, &program, &read, &write)
	if err != nil {
		return mapError(err)
	}
	var held []string
	if super {
		held = append(held, "superuser")
	} else {
		for _, p := range []struct {
			name string
			ok   bool
		}{{"pg_execute_server_program", program}, {"pg_read_server_files", read}, {"pg_write_server_files", write}} {
			if p.ok {
				held = append(held, p.name)
			}
		}
	}
	return sqlbase.CheckPrivileged(ctx, "postgres", c.id, role, held, c.cfg.AllowPrivilegedRole)
}

// connString is the keyword/value connection string of the config, the
// password left out.
func (c *Connector) connString() string {
	kv := [][2]string{
		{"host", c.cfg.Host}, {"port", fmt.Sprint(c.cfg.Port)}, {"dbname", c.cfg.Database}, {"user", c.cfg.User},
		{"sslmode", c.cfg.SSLMode}, {"application_name", c.cfg.ApplicationName},
		{"connect_timeout", fmt.Sprint(max(1, int(time.Duration(c.cfg.ConnectTimeout).Seconds())))},
	}
	if c.cfg.SSLRootCert != "" {
		kv = append(kv, [2]string{"sslrootcert", c.cfg.SSLRootCert})
	}
	parts := make([]string, len(kv))
	for i, p := range kv {
		parts[i] = p[0] + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(p[1]) + "'"
	}
	return strings.Join(parts, " ")
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Closer      = (*Connector)(nil)
	_ connectors.ToolCatalog = (*Connector)(nil)
	_ sqlbase.Backend        = (*Connector)(nil)
)

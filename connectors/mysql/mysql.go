// Package mysql is the "mysql" connector: guarded reads, idempotent
// writes and the schema of a MySQL or MariaDB database, over
// go-sql-driver/mysql.
//
// Every statement is a server-side prepared statement (the server
// refuses a second statement in one prepare; multiStatements stays off),
// reads run in START TRANSACTION READ ONLY with max_statement_time
// (MariaDB) or max_execution_time (MySQL) and sql_select_limit set on the
// session, after the guard in connectors/sqlbase. Writes record their
// operation key in an InnoDB operation table in the same transaction.
package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/mysql/inspect"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// Config is a mysql instance's configuration.
type Config struct {
	// DSN is the connection as one string, instead of host, port,
	// database and user.
	DSN      string `yaml:"dsn" desc:"The connection as one string instead of host, port, database and user: a mysql:// URL or go-sql-driver's form user@tcp(host:port)/db?param=value; its own tls and timeouts apply, multiStatements and allowAllFiles are always off. It may not carry a password: give that as the password credential" example:"mysql://legate_reader@db.internal:3306/app?tls=true"`
	Host     string `yaml:"host" desc:"Server host name or address (default 127.0.0.1 unless dsn is given)"`
	Port     int    `yaml:"port" desc:"Server port (default 3306 unless dsn is given)"`
	Database string `yaml:"database" desc:"Default database of the connection (required unless dsn is given)" example:"app"`
	User     string `yaml:"user" desc:"User to connect as (required unless dsn is given); give query-only instances a read-only user (README)" example:"legate_reader"`
	TLS      string `yaml:"tls" default:"preferred" enum:"false,true,skip-verify,preferred" desc:"TLS: false (never), true (required and verified), skip-verify (required, not verified) or preferred (when the server offers it); with dsn, the DSN's tls applies"`
	// Schemas are the databases schema lists.
	Schemas  []string `yaml:"schemas" desc:"Databases that schema lists (default: the database); access itself is what the user is granted"`
	ReadOnly bool     `yaml:"read_only" default:"false" desc:"Offer only the read tools, not execute; the instance refuses to start on a user holding the FILE or SUPER privilege (see allow_privileged_role)"`
	// AllowFunctions extends the guard's allowlist of functions.
	AllowFunctions []string `yaml:"allow_functions" desc:"Functions query may call beyond the built-in read-only ones: name, or database.name for a stored function; functions that reach files, wait, lock or run programs (LOAD_FILE, SLEEP, GET_LOCK, sys_exec …) cannot be allowed" example:"[app.net_price]"`
	// Toolsets selects the groups of tools the instance offers.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: query (default), inspect (default), diagnostics (default)\" example:\"[query, inspect]\""
	// AllowExplainAnalyze lets explain run the statement it plans.
	AllowExplainAnalyze bool `yaml:"allow_explain_analyze" default:"false" desc:"Let explain take analyze: true, which runs the statement (MariaDB ANALYZE, MySQL EXPLAIN ANALYZE) to report actual times and rows; it runs inside the READ ONLY transaction under statement_timeout, but it does run the query"`
	// AllowPrivilegedRole lets a read_only instance start on a privileged user.
	AllowPrivilegedRole bool `yaml:"allow_privileged_role" default:"false" desc:"Let a read_only instance start although its user holds the FILE or SUPER privilege; each start then logs a warning naming the user and the privilege"`
	// StatementTimeout bounds each statement on the server.
	StatementTimeout legate.Duration `yaml:"statement_timeout" default:"10s" desc:"max_statement_time (MariaDB) or max_execution_time (MySQL, reads only) of each statement"`
	ConnectTimeout   legate.Duration `yaml:"connect_timeout" default:"5s" desc:"Time limit of opening one connection"`
	DefaultRows      int             `yaml:"default_rows" default:"100" desc:"Rows of a query page when the call gives no limit"`
	MaxRows          int             `yaml:"max_rows" default:"1000" desc:"Most rows of a query page (at most 1000)"`
	MaxResultBytes   int             `yaml:"max_result_bytes" default:"4194304" desc:"Most bytes of a query page's rows, measured as JSON roughly; a page is cut before the row that would pass it (truncated), and a single row past it is refused"`
	MaxConns         int             `yaml:"max_conns" default:"4" desc:"Most open connections of the instance"`
	OperationTable   string          `yaml:"operation_table" default:"legate_operations" desc:"InnoDB table (optionally database.table) recording the operation key of each execute, written in the write's transaction; created when missing if the user may (README has its DDL)"`
	WriteAttempts    int             `yaml:"write_attempts" default:"3" desc:"Transactions one execute may take when the server reports a deadlock or lock wait timeout (1 to 10)"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "mysql",
		Description: "Query (read-only, guarded), write (idempotent) and describe a MySQL or MariaDB database",
		Credentials: []connectors.Credential{
			{Name: "password", Description: "Password of the configured user (optional for a user without one)"},
		},
	}, New))
}

// sqlMode is pinned on every connection: the guard reads "…" as strings
// and \ as an escape, which ANSI_QUOTES and NO_BACKSLASH_ESCAPES would
// change.
const sqlMode = "'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"

// Connector is one mysql instance.
type Connector struct {
	id      string
	cfg     Config
	tools   []connectors.Tool
	catalog []connectors.Tool // every tool of the type, each with its toolset
	selErr  error

	mu     sync.Mutex
	db     *sql.DB
	dbPW   string // the password db was opened with
	maria  bool   // the server is MariaDB (known once probed)
	probed bool

	opMu    sync.Mutex
	opReady bool

	allow     *sqlbase.Funcs // allow_functions
	allowErrs []error
}

// New builds an instance from its decoded config.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{id: inst.ID, cfg: *cfg}
	db := c.cfg.Database
	if c.cfg.DSN == "" {
		c.cfg.Host = cmp.Or(c.cfg.Host, "127.0.0.1")
		c.cfg.Port = cmp.Or(c.cfg.Port, 3306)
	} else if d, err := parseDSN(c.cfg.DSN); err == nil {
		db = d.DBName
	}
	if len(c.cfg.Schemas) == 0 && db != "" {
		c.cfg.Schemas = []string{db}
	}
	c.allow, c.allowErrs = sqlbase.NewFuncs(sqlbase.MySQL, c.cfg.AllowFunctions)
	c.tools = sqlbase.Tools(c, sqlbase.Options{
		AllowFunctions: c.allow,
		Dialect:        sqlbase.MySQL, Type: "mysql", Instance: inst.ID,
		DefaultRows: c.cfg.DefaultRows, MaxRows: c.cfg.MaxRows, Timeout: time.Duration(c.cfg.StatementTimeout),
		Schemas: c.cfg.Schemas, Attempts: c.cfg.WriteAttempts,
		OperationTable: c.cfg.OperationTable, MaxResultBytes: c.cfg.MaxResultBytes,
	})
	c.catalog = sqlbase.WithToolsets(append(c.tools, inspect.Tools(c, inspect.Options{
		Schemas: c.cfg.Schemas, MaxRows: c.cfg.MaxRows, MaxResultBytes: c.cfg.MaxResultBytes,
		Timeout: time.Duration(c.cfg.StatementTimeout), AllowAnalyze: c.cfg.AllowExplainAnalyze, AllowFunctions: c.allow,
	})...))
	c.tools, c.selErr = connectors.SelectTools("mysql", sqlbase.Toolsets, c.cfg.Toolsets, c.cfg.ReadOnly, c.catalog)
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
		if d, err := parseDSN(c.cfg.DSN); err != nil {
			errs = append(errs, err)
		} else if d.DBName == "" {
			errs = append(errs, legate.Invalid("dsn", "names no database: end it with /dbname"))
		}
	}
	if modes := []string{"false", "true", "skip-verify", "preferred"}; !slices.Contains(modes, c.cfg.TLS) {
		errs = append(errs, legate.Invalid("tls", "must be one of %s, not %q", strings.Join(modes, ", "), c.cfg.TLS))
	}
	return errors.Join(errs...)
}

// Test connects with the credentials, pings, and reads the server's
// version.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	db, err := c.connect(ctx, creds)
	if err != nil {
		return err
	}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return mapError(err)
	}
	connectors.ReportServerVersion(ctx, serverName(v)+" "+v)
	return nil
}

// serverName is MySQL or MariaDB, as the server's version says.
func serverName(version string) string {
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return "MariaDB"
	}
	return "MySQL"
}

// AdapterVersion is the version of the mysql connector's own code.
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
	if c.db != nil {
		c.db.Close()
		c.db = nil
	}
	return nil
}

// connect returns the pool for the password the credentials give now; a
// rotated password replaces it.
func (c *Connector) connect(ctx context.Context, creds connectors.Credentials) (*sql.DB, error) {
	pw := ""
	if creds != nil && creds.Has("password") {
		v, err := creds.Get(ctx, "password")
		if err != nil {
			return nil, connectors.CredentialError("mysql", "password", err)
		}
		pw = v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db != nil && c.dbPW == pw {
		return c.db, nil
	}
	cfg := driver.NewConfig()
	if c.cfg.DSN != "" {
		var err error
		if cfg, err = parseDSN(c.cfg.DSN); err != nil {
			return nil, err
		}
	} else {
		cfg.User, cfg.DBName = c.cfg.User, c.cfg.Database
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(c.cfg.Host, strconv.Itoa(c.cfg.Port))
		cfg.TLSConfig = c.cfg.TLS
	}
	cfg.Passwd = pw
	if cfg.Timeout == 0 || c.cfg.DSN == "" {
		cfg.Timeout = time.Duration(c.cfg.ConnectTimeout)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	// What the guard stands on holds whatever the dsn asks: one statement
	// per prepare, no client-side interpolation, no LOAD DATA LOCAL of any
	// file, and the sql_mode and time zone the guard and values read.
	cfg.MultiStatements, cfg.InterpolateParams, cfg.AllowAllFiles = false, false, false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["sql_mode"], cfg.Params["time_zone"] = sqlMode, "'+00:00'"
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "mysql: connection settings: %v", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(c.cfg.MaxConns)
	db.SetMaxIdleConns(c.cfg.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if c.cfg.ReadOnly {
		if err := c.checkUser(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
	}
	if old := c.db; old != nil {
		go old.Close() // waits for the calls still using it
	}
	c.db, c.dbPW, c.probed = db, pw, false
	return db, nil
}

// checkUser refuses a read_only instance whose user holds FILE (INTO
// OUTFILE, LOAD_FILE) or SUPER, unless allow_privileged_role
// (sqlbase.CheckPrivileged): it runs on each new pool, the instance's
// start and each password rotation.
func (c *Connector) checkUser(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return mapError(err)
	}
	defer conn.Close()
	var user string
	if err := conn.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return mapError(err)
	}
	rows, err := conn.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		return mapError(err)
	}
	defer rows.Close()
	var grants []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return mapError(err)
		}
		grants = append(grants, g)
	}
	if err := rows.Err(); err != nil {
		return mapError(err)
	}
	return sqlbase.CheckPrivileged(ctx, "mysql", c.id, user, privileged(grants), c.cfg.AllowPrivilegedRole)
}

// privileged returns which of FILE and SUPER the global grants (ON *.*)
// among grants give; ALL PRIVILEGES gives both.
func privileged(grants []string) []string {
	file, super := false, false
	for _, g := range grants {
		u := strings.ToUpper(g)
		on := strings.Index(u, " ON *.* TO ")
		if !strings.HasPrefix(u, "GRANT ") || on < 0 {
			continue
		}
		for _, p := range strings.Split(u[len("GRANT "):on], ",") {
			switch strings.TrimSpace(p) {
			case "ALL", "ALL PRIVILEGES":
				file, super = true, true
			case "FILE":
				file = true
			case "SUPER":
				super = true
			}
		}
	}
	var held []string
	if file {
		held = append(held, "FILE")
	}
	if super {
		held = append(held, "SUPER")
	}
	return held
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Closer      = (*Connector)(nil)
	_ connectors.ToolCatalog = (*Connector)(nil)
	_ sqlbase.Backend        = (*Connector)(nil)
)

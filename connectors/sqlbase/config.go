package sqlbase

import (
	"regexp"

	"github.com/legate-mcp/legate"
)

// Common are the settings every SQL connector's config has, gathered for
// one validation. Each connector declares its own config struct (the
// struct is its documented schema); it copies these fields here.
type Common struct {
	// DSN is the connection given as one string; it excludes Host, Port,
	// Database and User.
	DSN              string
	Host             string
	Port             int
	Database, User   string
	Schemas          []string
	StatementTimeout legate.Duration
	ConnectTimeout   legate.Duration
	DefaultRows      int
	MaxRows          int
	MaxResultBytes   int
	MaxConns         int
	OperationTable   string
	WriteAttempts    int
}

// tableName is a table name, optionally schema-qualified, that is quoted
// as is: letters, digits and underscores.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// ValidateCommon returns one *legate.FieldError per invalid setting.
func ValidateCommon(c Common) []error {
	var errs []error
	switch {
	case c.DSN != "" && (c.Host != "" || c.Port != 0 || c.Database != "" || c.User != ""):
		errs = append(errs, legate.Invalid("dsn", "is given beside host, port, database or user: give the connection either as dsn or as those fields, not both"))
	case c.DSN == "":
		if c.Host == "" {
			errs = append(errs, legate.Invalid("host", "is required (or give dsn)"))
		}
		if c.Port < 1 || c.Port > 65535 {
			errs = append(errs, legate.Invalid("port", "must be between 1 and 65535, got %d", c.Port))
		}
		if c.Database == "" {
			errs = append(errs, legate.Invalid("database", "is required (or give dsn)"))
		}
		if c.User == "" {
			errs = append(errs, legate.Invalid("user", "is required (or give dsn)"))
		}
	}
	for i, s := range c.Schemas {
		if s == "" || len(s) > 64 {
			errs = append(errs, legate.Invalid("schemas", "entry %d must be 1 to 64 characters", i))
		}
	}
	if c.StatementTimeout <= 0 {
		errs = append(errs, legate.Invalid("statement_timeout", "must be positive"))
	}
	if c.ConnectTimeout <= 0 {
		errs = append(errs, legate.Invalid("connect_timeout", "must be positive"))
	}
	if c.MaxRows < 1 || c.MaxRows > HardMaxRows {
		errs = append(errs, legate.Invalid("max_rows", "must be between 1 and %d, got %d", HardMaxRows, c.MaxRows))
	}
	if c.DefaultRows < 1 || c.DefaultRows > max(c.MaxRows, 1) {
		errs = append(errs, legate.Invalid("default_rows", "must be between 1 and max_rows (%d), got %d", c.MaxRows, c.DefaultRows))
	}
	if c.MaxResultBytes < 1024 || c.MaxResultBytes > 64<<20 {
		errs = append(errs, legate.Invalid("max_result_bytes", "must be between 1024 and 67108864 (64 MiB), got %d", c.MaxResultBytes))
	}
	if c.MaxConns < 1 || c.MaxConns > 1000 {
		errs = append(errs, legate.Invalid("max_conns", "must be between 1 and 1000, got %d", c.MaxConns))
	}
	if !tableName.MatchString(c.OperationTable) {
		errs = append(errs, legate.Invalid("operation_table", "must be a table name of letters, digits and underscores, optionally schema.table"))
	}
	if c.WriteAttempts < 1 || c.WriteAttempts > 10 {
		errs = append(errs, legate.Invalid("write_attempts", "must be between 1 and 10, got %d", c.WriteAttempts))
	}
	return errs
}

// DSNPassword is the refusal of a dsn carrying a password, which config
// would keep in plain text where a credential reference keeps it out.
func DSNPassword() error {
	return legate.Invalid("dsn", "carries a password: remove it from the DSN and give it as the password credential, a reference ({env: NAME}, {file: PATH} or {vault: NAME}) resolved at call time")
}

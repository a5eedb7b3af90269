package mysql

import (
	"errors"
	"net"
	"net/url"
	"strings"

	driver "github.com/go-sql-driver/mysql"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// parseDSN reads a dsn, a mysql:// URL or go-sql-driver's own form
// (user@tcp(host:port)/db?param=value), into the driver's config;
// one carrying a password is refused (that is the password credential's).
func parseDSN(dsn string) (*driver.Config, error) {
	form := dsn
	if strings.HasPrefix(dsn, "mysql://") || strings.HasPrefix(dsn, "mariadb://") {
		u, err := url.Parse(dsn)
		if err != nil || u.Host == "" {
			return nil, legate.Invalid("dsn", "is not a valid mysql:// URL (mysql://user@host:3306/db)")
		}
		if _, ok := u.User.Password(); ok {
			return nil, sqlbase.DSNPassword()
		}
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = "3306"
		}
		form = u.User.Username() + "@tcp(" + net.JoinHostPort(host, port) + ")/" + strings.TrimPrefix(u.Path, "/")
		if u.RawQuery != "" {
			form += "?" + u.RawQuery
		}
	} else if strings.Contains(dsn, "://") {
		return nil, legate.Invalid("dsn", "must be a mysql:// URL or the driver's form user@tcp(host:port)/db")
	} else if slash := strings.LastIndexByte(dsn, '/'); slash > 0 {
		// user:password@…: refused before parsing, so that no parse error
		// can show the password.
		if at := strings.LastIndexByte(dsn[:slash], '@'); at > 0 && strings.Contains(dsn[:at], ":") {
			return nil, sqlbase.DSNPassword()
		}
	}
	cfg, err := driver.ParseDSN(form)
	if err != nil {
		msg := err.Error()
		var pe *url.Error
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, legate.Invalid("dsn", "does not parse: %s (the form is user@tcp(host:port)/db or mysql://user@host:port/db)", msg)
	}
	if cfg.Passwd != "" {
		return nil, sqlbase.DSNPassword()
	}
	return cfg, nil
}

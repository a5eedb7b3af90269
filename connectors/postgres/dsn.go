package postgres

import (
	"errors"
	"net/url"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// checkDSN checks a dsn without I/O: a postgres:// or postgresql:// URL
// or a keyword/value string that parses, and carries no password (that
// is the password credential's).
func checkDSN(dsn string) error {
	settings, err := dsnSettings(dsn)
	if err != nil {
		return legate.Invalid("dsn", "%v", err)
	}
	if _, ok := settings["password"]; ok {
		return sqlbase.DSNPassword()
	}
	return nil
}

// dsnSettings reads the settings a dsn gives; a URL's password is
// "password", as libpq reads it.
func dsnSettings(dsn string) (map[string]string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, errors.New("is not a valid URL: " + strings.TrimPrefix(err.Error(), "parse "+`"`+dsn+`": `))
		}
		out := map[string]string{}
		for k, v := range u.Query() {
			out[k] = v[0]
		}
		if u.User != nil {
			out["user"] = u.User.Username()
			if pw, ok := u.User.Password(); ok {
				out["password"] = pw
			}
		}
		return out, nil
	}
	if strings.Contains(dsn, "://") {
		return nil, errors.New("must be a postgres:// or postgresql:// URL or a keyword/value string (host=… dbname=…)")
	}
	return keywordValues(dsn)
}

// keywordValues parses libpq's keyword/value form: key = value pairs
// separated by spaces, a value in single quotes with \' and \\ escapes.
func keywordValues(s string) (map[string]string, error) {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, errors.New("must be a postgres:// URL or keyword=value pairs: " + strings.Fields(s)[0] + " has no value")
		}
		key := strings.TrimSpace(s[:eq])
		if strings.ContainsAny(key, " \t'") {
			return nil, errors.New("must be a postgres:// URL or keyword=value pairs: " + key + " has no value")
		}
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, "'") {
			s = s[1:]
			closed := false
			for len(s) > 0 && !closed {
				switch {
				case s[0] == '\\' && len(s) > 1:
					val.WriteByte(s[1])
					s = s[2:]
				case s[0] == '\'':
					closed = true
					s = s[1:]
				default:
					val.WriteByte(s[0])
					s = s[1:]
				}
			}
			if !closed {
				return nil, errors.New("the value of " + key + " has no closing quote")
			}
		} else {
			end := strings.IndexAny(s, " \t\n\r")
			if end < 0 {
				end = len(s)
			}
			val.WriteString(s[:end])
			s = s[end:]
		}
		out[key] = val.String()
	}
}

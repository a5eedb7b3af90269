package postgres

import (
	"errors"
	"net/url"
	"strings"
)

// hasParam reports whether the connection URL sets the query parameter.
func hasParam(raw, name string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Query().Has(name)
}

// redact masks in err's text the password of the URL it came from: pgx
// redacts recognisable passwords in its parse errors at best effort, and
// its connection errors name the server, not the URL, but an error that
// leaves here may be logged.
func redact(err error, raw string) error {
	if err == nil {
		return nil
	}
	var secrets []string
	if u, perr := url.Parse(raw); perr == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p)
		}
		if p := u.Query().Get("password"); p != "" {
			secrets = append(secrets, p)
		}
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// Redacted is url with its password masked, for messages.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable postgres URL)"
	}
	return u.Redacted()
}

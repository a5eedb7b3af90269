package sqlite

import (
	"errors"

	driver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// duplicate reports whether err is SQLite refusing a row because its
// primary key or another unique key is taken. The extended result code
// says so; the message is written for people and may change.
func duplicate(err error) bool {
	var se *driver.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return true
	}
	return false
}

// busy reports whether err is SQLite finding the database locked by
// another connection where it does not wait on its own: switching a new
// file to WAL while another process opens it too.
func busy(err error) bool {
	var se *driver.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

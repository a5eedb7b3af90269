package sqlite

import "database/sql"

// Duplicate is duplicate, for the tests of package sqlite_test.
var Duplicate = duplicate

// DB is the store's database, for tests that need a raw statement.
func (s *Store) DB() *sql.DB { return s.db }

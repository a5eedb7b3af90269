package sqlite

// Duplicate is duplicate, for the tests of package sqlite_test.
var Duplicate = duplicate

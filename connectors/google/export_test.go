package google

import "github.com/legate-mcp/legate/connectors/google/gcore"

// SetMaxAnswerBytes bounds API answers to n bytes until restore is called.
func SetMaxAnswerBytes(n int64) (restore func()) {
	old := gcore.MaxAnswerBytes
	gcore.MaxAnswerBytes = n
	return func() { gcore.MaxAnswerBytes = old }
}

package httpconn

import "github.com/legate-mcp/legate/connectors"

// The gateway serves http.request without configuration: registered here,
// it exists in any binary that includes this type.
func init() {
	connectors.RegisterBuiltin(connectors.Builtin{Instance: "http", Tool: Builtin()})
}

package kb

import "github.com/legate-mcp/legate/connectors"

// Updated returns a channel closed when the instance's index is next
// published (built, or changed by a folder or a URL).
func Updated(c connectors.Connector) <-chan struct{} { return c.(*Connector).ix.updatedChan() }

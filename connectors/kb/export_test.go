package kb

import "github.com/legate-mcp/legate/connectors"

// Updated returns a channel closed when the instance's index is next
// published (built, or changed by a folder or a URL).
func Updated(c connectors.Connector) <-chan struct{} { return c.(*Connector).ix.updatedChan() }

// CheckStoreEachCall makes c look at the store's generation on every
// call, instead of at most once a second: a test then sees at its next
// call what another replica wrote.
func CheckStoreEachCall(c connectors.Connector) { c.(*Connector).ix.share.every = 0 }

package kb

import (
	"context"

	"github.com/legate-mcp/legate/connectors"
)

// Updated returns a channel closed when the instance's index is next
// published (built, or changed by a folder or a URL).
func Updated(c connectors.Connector) <-chan struct{} { return c.(*Connector).ix.updatedChan() }

// CheckStoreEachCall makes c look at the store's generation on every
// call, instead of at most once a second: a test then sees at its next
// call what another replica wrote.
func CheckStoreEachCall(c connectors.Connector) { c.(*Connector).ix.share.every = 0 }

// ReloadAll reads c's whole index again from the store, as a replica
// does at its first build.
func ReloadAll(c connectors.Connector) error {
	ix := c.(*Connector).ix
	ix.share.mu.Lock()
	defer ix.share.mu.Unlock()
	ix.snap.Store(nil)
	return ix.load(context.Background(), nil, true)
}

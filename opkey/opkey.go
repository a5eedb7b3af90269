// Package opkey gives each tool call its operation id, the idempotency key
// under which connectors perform its writes at most once (connectors.Call.
// OperationID, claimed in the instance's operation record).
//
// A call's id is, in order:
//
//  1. derived from the key the client gives in the call's _meta
//     (legate.IdempotencyMetaKey), the caller, the tool and the arguments:
//     the same on every replica and for as long as the operation record
//     keeps it, so a client that re-sends a call after losing its answer
//     gets the first outcome, and a key reused with other arguments is
//     another operation, never the first one's outcome;
//  2. for a call that may write, the id of the same caller's call to the
//     same tool with the same arguments within the repeat window, when
//     there was one: a client retrying without a key gets the first
//     outcome too. This memory is the process's: through replicas, a
//     client's key is what holds;
//  3. new.
package opkey

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/legate-mcp/legate"
)

// DefaultWindow is the repeat window when the config sets none.
const DefaultWindow = 10 * time.Minute

// recentSize bounds the calls remembered for the repeat window.
const recentSize = 16384

// Call is what a call's id depends on.
type Call struct {
	Tenant, Principal string
	// Tool is the tool's canonical name.
	Tool string
	// ArgsHash is the digest of the arguments' canonical JSON.
	ArgsHash string
	// Class is the call's class: a read is never matched to an earlier call.
	Class legate.Class
	// ClientKey is the client's own key (ClientKey), "" when it gave none.
	ClientKey string
}

// Keys hands out operation ids. Its zero value is not usable: call New.
type Keys struct {
	now    func() time.Time
	mu     sync.Mutex
	recent *simplelru.LRU[string, seen]
}

type seen struct {
	id string
	at time.Time
}

// New returns Keys remembering calls for the repeat window.
func New() *Keys {
	recent, _ := simplelru.NewLRU[string, seen](recentSize, nil)
	return &Keys{now: time.Now, recent: recent}
}

// For returns c's operation id; window is the repeat window (0: none).
func (k *Keys) For(c Call, window time.Duration) string {
	if c.ClientKey != "" {
		return "key-" + digest(c.Tenant, c.Principal, c.Tool, c.ArgsHash, c.ClientKey)
	}
	if window <= 0 || c.Class == legate.ClassRead {
		return uuid.NewString()
	}
	call := digest(c.Tenant, c.Principal, c.Tool, c.ArgsHash)
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if s, ok := k.recent.Get(call); ok && now.Sub(s.at) < window {
		return s.id
	}
	id := uuid.NewString()
	k.recent.Add(call, seen{id: id, at: now})
	return id
}

// ClientKey is the key a client gave in _meta, as a string: a JSON string
// as it is, any other value as its JSON; "" for none.
func ClientKey(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// digest is a hex digest of parts, each ended by a NUL.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

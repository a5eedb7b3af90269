package vault

import (
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/legate-mcp/legate"
)

// MaxRecent bounds the values a Masks keeps besides its pinned ones: the
// tokens of people's connections, which are refreshed often, are kept
// while they are among the most recently seen, so that the set, and the
// work of masking with it, does not grow with every refresh.
const MaxRecent = 512

// Masks is every secret value this process has resolved or been given,
// as one mask set: applied to every result, error and record the gateway
// returns or stores, so that a secret is masked by its value wherever it
// appears — whatever tool put it there, under whatever name — and not
// only where a connector knew to look for it. A nil *Masks masks nothing.
//
// Pinned values (Pin) are the configuration's, resolved when it is
// loaded: they are masked before any call has used them. Seen values
// (Add) are those resolved at call time (a tenant's vault secret, a
// person's access token), kept while among the MaxRecent most recent.
type Masks struct {
	mu     sync.Mutex
	pinned map[string][]string // by who pinned them
	recent *lru.LRU[string, struct{}]
	set    atomic.Pointer[legate.Secrets]
}

// NewMasks returns an empty set.
func NewMasks() *Masks {
	r, _ := lru.NewLRU[string, struct{}](MaxRecent, nil)
	return &Masks{recent: r, pinned: map[string][]string{}}
}

// Pin makes values the ones pinned by owner (the configuration's
// instances, one upstream), in place of those it pinned before: a
// reloaded configuration's replace the old ones, and Pin(owner) with no
// values unpins them. Each value is taken with its parts
// (legate.CredentialParts: the token of "Bearer TOKEN", the user and
// password of a Basic credential).
func (m *Masks) Pin(owner string, values ...string) {
	if m == nil {
		return
	}
	var parts []string
	for _, v := range values {
		if v != "" {
			parts = append(parts, legate.CredentialParts(v)...)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(parts) == 0 {
		delete(m.pinned, owner)
	} else {
		m.pinned[owner] = parts
	}
	m.rebuild()
}

// Add adds values seen at call time. A value already in the set costs a
// lock and a map look-up; only a new one rebuilds the set.
func (m *Masks) Add(values ...string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := false
	for _, v := range values {
		if v == "" {
			continue
		}
		for _, p := range legate.CredentialParts(v) {
			if _, ok := m.recent.Get(p); !ok {
				m.recent.Add(p, struct{}{})
				changed = true
			}
		}
	}
	if changed {
		m.rebuild()
	}
}

func (m *Masks) rebuild() {
	values := m.recent.Keys()
	for _, vs := range m.pinned {
		values = append(values, vs...)
	}
	m.set.Store(legate.NewSecrets(values...))
}

// Secrets returns the set as it is now: nil (masking nothing) when it is
// empty. It costs an atomic load.
func (m *Masks) Secrets() *legate.Secrets {
	if m == nil {
		return nil
	}
	return m.set.Load()
}

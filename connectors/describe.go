package connectors

import (
	"context"
	"slices"
	"sync"
)

// The environments an instance works against (a config's `environment`).
const (
	// EnvProduction is the provider's real account: its writes are real.
	EnvProduction = "production"
	// EnvSandbox is a test account or mode (a Stripe test key).
	EnvSandbox = "sandbox"
)

// Environments are the values an instance's environment may take.
var Environments = []string{EnvProduction, EnvSandbox}

// Description is what a connector instance says of itself beside its
// tools: what `legate connector show`, the admin API and the panel show.
type Description struct {
	// AdapterVersion is the version (semver) of the connector's own code:
	// its minor part moves when tools are added, its major part when a
	// tool or result changes in a way a caller notices.
	AdapterVersion string
	// APIVersion is the version of the provider's API the connector
	// speaks: the version header it sends (GitHub's
	// X-GitHub-Api-Version, Notion-Version, Stripe-Version) or the
	// version in the API's paths.
	APIVersion string
	// Scopes are the scopes the instance's tools need of its credential,
	// where the provider has scopes; nil where it has none.
	Scopes []string
	// Environment is the environment the configuration implies ("" when
	// it implies none): a Stripe instance that accepts only test keys is
	// a sandbox.
	Environment string
}

// Describer is implemented by a connector that describes itself.
// Connectors without it are shown with no versions and no scopes.
type Describer interface {
	Describe() Description
}

// Facts are what a connection test learned of an instance's credential
// and provider, told through [ReportScopes], [ReportEnvironment] and
// [ReportServerVersion] under a context of [WithFacts].
type Facts struct {
	// ScopesKnown says the provider told the credential's scopes: Scopes
	// are then those it has, and Missing those the instance's tools need
	// that it lacks (as the connector reads its provider's scopes, one
	// implying another).
	ScopesKnown bool
	Scopes      []string
	Missing     []string
	// Environment is what the credential says it is for ("" unknown).
	Environment string
	// ServerVersion is the provider's own version where it tells it (a
	// database server's).
	ServerVersion string
}

type factsKey struct{}

// facts is the sink of one test's facts; reports may come from several
// goroutines.
type facts struct {
	mu sync.Mutex
	f  *Facts
}

// WithFacts returns a context under which a connector's Test fills f
// through the Report functions.
func WithFacts(ctx context.Context, f *Facts) context.Context {
	return context.WithValue(ctx, factsKey{}, &facts{f: f})
}

func report(ctx context.Context, fn func(*Facts)) {
	if s, ok := ctx.Value(factsKey{}).(*facts); ok {
		s.mu.Lock()
		fn(s.f)
		s.mu.Unlock()
	}
}

// ReportScopes tells the facts of ctx, if any, the scopes the credential
// has and those of the instance's needs it lacks.
func ReportScopes(ctx context.Context, has, missing []string) {
	report(ctx, func(f *Facts) {
		f.ScopesKnown = true
		f.Scopes, f.Missing = sorted(has), sorted(missing)
	})
}

// ReportEnvironment tells the facts of ctx, if any, the environment the
// credential is for: EnvProduction or EnvSandbox.
func ReportEnvironment(ctx context.Context, env string) {
	report(ctx, func(f *Facts) { f.Environment = env })
}

// ReportServerVersion tells the facts of ctx, if any, the provider's own
// version ("PostgreSQL 16.4").
func ReportServerVersion(ctx context.Context, v string) {
	report(ctx, func(f *Facts) { f.ServerVersion = v })
}

// sorted is s sorted and without duplicates, never nil.
func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return append([]string{}, slices.Compact(out)...)
}

// Package legate is the vocabulary every part of the gateway speaks: the
// canonical error codes a failed call carries (Code, Error), the operation
// classes (Class), a connector's result (Result), durations in config
// (Duration), and the masking of credential values in any form they may be
// echoed back in (Secrets).
//
// It imports nothing of the project and no third-party package, so that
// connectors, upstreams, policy, config and the catalog can all depend on it
// without depending on each other.
package legate

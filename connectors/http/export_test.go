package httpconn

import "testing"

// AllowPrivateInBuiltin lets tools returned by Builtin during the test
// reach the 127.0.0.1 test servers.
func AllowPrivateInBuiltin(t testing.TB) {
	old := builtinAllowPrivate
	builtinAllowPrivate = true
	t.Cleanup(func() { builtinAllowPrivate = old })
}

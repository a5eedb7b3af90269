package host

import "github.com/legate-mcp/legate/connectors/host/sandbox"

// SetEUID makes pkg_install see uid as the process's effective user id
// until the returned function restores it.
func SetEUID(uid int) (restore func()) {
	old := geteuid
	geteuid = func() int { return uid }
	return func() { geteuid = old }
}

// WithoutLandlock makes sh_exec behave as on a kernel without Landlock
// until the returned function restores it.
func WithoutLandlock() (restore func()) {
	sandbox.NoLandlock = true
	return func() { sandbox.NoLandlock = false }
}

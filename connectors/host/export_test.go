package host

// SetEUID makes pkg_install see uid as the process's effective user id
// until the returned function restores it.
func SetEUID(uid int) (restore func()) {
	old := geteuid
	geteuid = func() int { return uid }
	return func() { geteuid = old }
}

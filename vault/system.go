package vault

import "context"

// SystemPrefix starts the names of Legate's own secrets, such as the
// signing key of its OAuth authorization server. NamePattern refuses it,
// so no credential reference, `legate vault` command or admin API call can
// read, replace or remove one; they are sealed, re-wrapped by a rotation
// and copied by `legate store migrate` like every secret, and listed with
// them.
const SystemPrefix = "!"

// SetSystem stores value as the next version of Legate's own secret name
// (shared, named SystemPrefix+name).
func (v *Vault) SetSystem(ctx context.Context, name string, value []byte) (Info, error) {
	return v.set(ctx, "", SystemPrefix+name, value)
}

// GetSystem returns one version of Legate's own secret name, the newest
// when version is 0; a missing one is an error wrapping ErrNotFound.
func (v *Vault) GetSystem(ctx context.Context, name string, version int) ([]byte, Info, error) {
	return v.GetVersion(ctx, "", SystemPrefix+name, version)
}

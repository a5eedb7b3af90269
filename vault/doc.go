// Package vault holds what Legate knows of secrets: references to them in
// configuration, their resolution at call time, and the vault that keeps
// secrets encrypted in the store.
//
// # References
//
// A reference names where a secret lives — {env: NAME}, {file: PATH} or
// {vault: NAME} — and a Resolver reads the value only when a call needs
// it, for the call's tenant. Values never enter tool arguments, results,
// errors or logs; errors name the reference.
//
//	r := &vault.Resolver{Vault: v}
//	token, err := r.Resolve(ctx, "acme", vault.Ref{Vault: "github-token"})
//
// A {vault: NAME} reference resolves to the calling tenant's own secret
// NAME when it has one, else to the shared secret NAME (stored with the
// empty tenant); with neither, the error says so, naming vault:NAME and
// the tenant.
//
// # Envelope encryption
//
// Every version of a secret is a row (tenant, name, version): the value
// encrypted with AES-256-GCM under its own random 256-bit data key, and
// that data key encrypted ("wrapped"), also with AES-256-GCM, by a
// key-encryption key (KEK) of the key ring, whose id the row keeps. The
// additional data of the value binds it to tenant, name and version; that
// of the wrapped key binds it to the KEK's id, tenant, name and version. A
// ciphertext or wrapped key copied into another row — another tenant,
// name or version — fails to decrypt (ErrDecrypt).
//
//	v := vault.New(st.Secrets(), vault.SourceFromEnv(os.Getenv, stateDir), nil)
//	info, err := v.Set(ctx, "", "github-token", value) // a new version
//	...
//	value, info, err = v.Get(ctx, "", "github-token") // the newest version
//
// # The key ring
//
// The ring is text: entries ID:BASE64, each a 32-byte key in base64,
// separated by commas or newlines; the first is the primary, which wraps
// every new data key; the others only unwrap, until a rotation retires
// them. A bare BASE64 entry gets the id "fp-" and 8 hex digits of a hash
// of the key. Lines starting with # are comments. It comes from, in order:
//
//  1. LEGATE_MASTER_KEY: the ring itself, e.g.
//     "k20261130-1a2b3c:BASE64,k20250601-0d0e0f:BASE64" or one bare key
//     (openssl rand -base64 32);
//  2. LEGATE_KEY_FILE: the path of a file holding the ring, one entry a
//     line; it must exist;
//  3. vault.key in the state directory, created (mode 0600, one new key)
//     when missing, with a warning logged once: that key sits beside the
//     data it protects, so a copy of the state directory is a copy of
//     every secret. Set one of the two variables for anything that
//     matters.
//
// # Rotation
//
// Rotate makes a new primary key and re-wraps every data key with it: it
// unwraps each data key with its old KEK and wraps it with the new one; the
// secret values are never decrypted. Rows are re-wrapped in batches, one
// transaction each, each change applied only if its row is still as read,
// so a reader — in this process or in a running server — always reads a
// consistent row, and one whose KEK id it does not know makes it read the
// ring again. When no row is wrapped by an older key, that key is retired
// (dropped from the ring).
//
// A run may stop anywhere (cancelled, killed, or after MaxBatches): the
// next run sees rows still wrapped by an older key, makes no new key and
// continues with the current primary.
//
// With a key file, one run does it all: it writes the ring with the new key
// first and the old one kept (written aside and renamed into place, under a
// lock file so two rotations do not race), re-wraps, then writes the ring
// without the retired key. A server holding the old ring reads the file
// again when it meets the new key id.
//
// With LEGATE_MASTER_KEY, Legate cannot change the ring, so rotation takes
// two runs. The first makes a key, changes no row, and prints the value to
// set: the new key first, the current one kept to decrypt
// ("NEW:BASE64,OLD:BASE64"). The operator sets it for every process that
// uses the vault and restarts them; the second run (the same command)
// re-wraps every row and then names the keys to drop from the variable.
package vault

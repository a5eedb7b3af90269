package vault_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// canary is a value that must never appear in an error, log or listing.
const canary = "canary-7f3a9c-do-not-print"

type fixture struct {
	dir string
	st  *sqlite.Store
	v   *vault.Vault
	log *bytes.Buffer
}

// newFixture opens a store in a temporary state directory and a vault
// whose key file is created there.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{dir: dir, st: st, log: &bytes.Buffer{}}
	f.v = f.open()
	return f
}

// open returns another vault on the same store and key source, as another
// process would have.
func (f *fixture) open() *vault.Vault {
	lg := slog.New(slog.NewTextHandler(f.log, nil))
	return vault.New(f.st.Secrets(), vault.SourceFromEnv(func(string) string { return "" }, f.dir), &vault.Options{Logger: lg})
}

// db opens the SQLite file directly, to tamper with rows.
func (f *fixture) db(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func (f *fixture) set(t *testing.T, tenant, name, value string) vault.Info {
	t.Helper()
	info, err := f.v.Set(context.Background(), tenant, name, []byte(value))
	if err != nil {
		t.Fatalf("set %s/%s: %v", tenant, name, err)
	}
	return info
}

func noCanary(t *testing.T, what string, s string) {
	t.Helper()
	if strings.Contains(s, canary) {
		t.Fatalf("%s shows the secret value: %s", what, s)
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if info := f.set(t, "", "token", "shared-"+canary); info.Version != 1 || info.KeyID == "" {
		t.Fatalf("first set: %+v", info)
	}
	if info := f.set(t, "", "token", "shared2-"+canary); info.Version != 2 {
		t.Fatalf("second set: version %d, want 2", info.Version)
	}
	f.set(t, "acme", "token", "acme-"+canary)

	got, info, err := f.v.Get(ctx, "", "token")
	if err != nil || string(got) != "shared2-"+canary || info.Version != 2 {
		t.Fatalf("get shared: %q %+v %v", got, info, err)
	}
	r := &vault.Resolver{Vault: f.v}
	for tenant, want := range map[string]string{"": "shared2-", "acme": "acme-", "globex": "shared2-"} {
		v, err := r.Resolve(ctx, tenant, vault.Ref{Vault: "token"})
		if err != nil || v != want+canary {
			t.Errorf("resolve for tenant %q: %q, %v; want %q", tenant, v, err, want+canary)
		}
	}

	_, err = r.Resolve(ctx, "acme", vault.Ref{Vault: "nope"})
	if !errors.Is(err, vault.ErrNotFound) || !strings.Contains(err.Error(), "vault:nope") || !strings.Contains(err.Error(), `"acme"`) {
		t.Fatalf("missing secret: %v", err)
	}
	_, err = (&vault.Resolver{}).Resolve(ctx, "", vault.Ref{Vault: "token"})
	if err == nil || !strings.Contains(err.Error(), "vault:token") {
		t.Fatalf("no vault: %v", err)
	}

	list, err := f.v.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
	noCanary(t, "list", fmt.Sprintf("%+v", list))

	if n, err := f.v.Delete(ctx, "", "token"); err != nil || n != 2 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if _, err := f.v.Delete(ctx, "", "token"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if v, err := r.Resolve(ctx, "globex", vault.Ref{Vault: "token"}); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("after delete: %q %v", v, err)
	}

	for name, value := range map[string]string{"bad name": "x", "ok": "", "big": strings.Repeat("x", vault.MaxValueSize+1)} {
		if _, err := f.v.Set(ctx, "", name, []byte(value)); err == nil {
			t.Errorf("set %q with %d bytes: no error", name, len(value))
		}
	}
}

func TestKeyFileCreatedOnceWithWarning(t *testing.T) {
	f := newFixture(t)
	if err := f.v.LoadKeys(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(f.dir, vault.KeyFileName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	if strings.Count(f.log.String(), "created a key file") != 1 {
		t.Fatalf("want one warning, got log:\n%s", f.log)
	}
	if err := f.open().LoadKeys(); err != nil {
		t.Fatal(err)
	}
	if strings.Count(f.log.String(), "created a key file") != 1 {
		t.Fatalf("a second open warned again:\n%s", f.log)
	}
}

// row is one stored version's crypto columns.
type row struct {
	keyID          string
	wrapped, ciphr []byte
}

func readRow(t *testing.T, db *sql.DB, tenant, name string, version int) row {
	t.Helper()
	var r row
	if err := db.QueryRow(`SELECT key_id, wrapped_key, ciphertext FROM secrets WHERE tenant = ? AND name = ? AND version = ?`,
		tenant, name, version).Scan(&r.keyID, &r.wrapped, &r.ciphr); err != nil {
		t.Fatal(err)
	}
	return r
}

func writeRow(t *testing.T, db *sql.DB, tenant, name string, version int, r row) {
	t.Helper()
	if _, err := db.Exec(`UPDATE secrets SET key_id = ?, wrapped_key = ?, ciphertext = ? WHERE tenant = ? AND name = ? AND version = ?`,
		r.keyID, r.wrapped, r.ciphr, tenant, name, version); err != nil {
		t.Fatal(err)
	}
}

func TestMovedCiphertextsFailToDecrypt(t *testing.T) {
	type ver struct {
		tenant, name string
		version      int
	}
	a := ver{"acme", "token", 1}
	cases := map[string]struct {
		to                  ver
		ciphertext, wrapped bool
	}{
		"both to another name":         {ver{"acme", "other", 1}, true, true},
		"both to another tenant":       {ver{"globex", "token", 1}, true, true},
		"both to the shared tenant":    {ver{"", "token", 1}, true, true},
		"both to another version":      {ver{"acme", "token", 2}, true, true},
		"ciphertext to another name":   {ver{"acme", "other", 1}, true, false},
		"wrapped key to another name":  {ver{"acme", "other", 1}, false, true},
		"ciphertext to another tenant": {ver{"globex", "token", 1}, true, false},
		"wrapped key to another vers.": {ver{"acme", "token", 2}, false, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			for _, v := range []ver{a, {"acme", "other", 1}, {"globex", "token", 1}, {"", "token", 1}} {
				f.set(t, v.tenant, v.name, canary+"-"+v.tenant+"-"+v.name)
			}
			f.set(t, "acme", "token", canary+"-acme-token-v2")
			db := f.db(t)
			ra, rb := readRow(t, db, a.tenant, a.name, a.version), readRow(t, db, tc.to.tenant, tc.to.name, tc.to.version)
			na, nb := ra, rb
			if tc.ciphertext {
				na.ciphr, nb.ciphr = rb.ciphr, ra.ciphr
			}
			if tc.wrapped {
				na.wrapped, nb.wrapped = rb.wrapped, ra.wrapped
			}
			writeRow(t, db, a.tenant, a.name, a.version, na)
			writeRow(t, db, tc.to.tenant, tc.to.name, tc.to.version, nb)

			for _, v := range []ver{a, tc.to} {
				got, _, err := f.v.GetVersion(ctx, v.tenant, v.name, v.version)
				if !errors.Is(err, vault.ErrDecrypt) {
					t.Fatalf("%v: got %q, %v; want ErrDecrypt", v, got, err)
				}
				noCanary(t, "error", err.Error())
				if !strings.Contains(err.Error(), "vault:"+v.name) {
					t.Errorf("error does not name the secret: %v", err)
				}
			}
		})
	}
}

func TestRelabelledKeyIDFailsToDecrypt(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.set(t, "", "token", canary)
	old, _ := f.v.Keys()
	if _, err := f.v.Rotate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Put the retired key back as an older key, and claim the row is
	// wrapped by it: the wrapped key's additional data names the real one.
	k, _ := f.v.Keys()
	ring, err := vault.NewKeyRing(append(k.Keys(), old.Keys()...)...)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.dir, vault.KeyFileName), []byte(ring.EnvValue()), 0o600)
	db := f.db(t)
	if _, err := db.Exec(`UPDATE secrets SET key_id = ?`, old.Primary().ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.open().Get(ctx, "", "token"); !errors.Is(err, vault.ErrDecrypt) {
		t.Fatalf("relabelled key id: %v, want ErrDecrypt", err)
	}
	if _, err := db.Exec(`UPDATE secrets SET key_id = 'gone'`); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.open().Get(ctx, "", "token")
	if !errors.Is(err, vault.ErrUnknownKey) || !strings.Contains(err.Error(), `"gone"`) {
		t.Fatalf("unknown key id: %v", err)
	}
	if _, err := f.open().Rotate(ctx, nil); err == nil || !strings.Contains(err.Error(), `"gone"`) {
		t.Fatalf("rotate over an unknown key: %v", err)
	}
}

func TestParseKeyRing(t *testing.T) {
	k1, _ := vault.NewKey()
	k2, _ := vault.NewKey()
	ring, _ := vault.NewKeyRing(k1, k2)
	env := ring.EnvValue()
	parts := strings.Split(env, ",")
	_, b64, _ := strings.Cut(parts[0], ":")

	good := map[string][]string{
		"env form":        {env, k1.ID + "," + k2.ID},
		"file form":       {"# comment\n" + parts[0] + "\n\n" + parts[1] + "\n", k1.ID + "," + k2.ID},
		"bare key":        {b64, ""},
		"url base64":      {"x:" + strings.NewReplacer("+", "-", "/", "_").Replace(strings.TrimRight(b64, "=")), "x"},
		"spaces and ends": {"  " + parts[1] + " , " + parts[0] + " ,", k2.ID + "," + k1.ID},
	}
	for name, tc := range good {
		r, err := vault.ParseKeyRing(tc[0])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if tc[1] != "" && r.String() != tc[1] {
			t.Errorf("%s: ids %s, want %s", name, r, tc[1])
		}
		if name == "bare key" && !strings.HasPrefix(r.Primary().ID, "fp-") {
			t.Errorf("bare key id %q", r.Primary().ID)
		}
		if s := fmt.Sprintf("%v %+v %#v %v", r, r, r, r.Keys()); strings.Contains(s, b64[:20]) {
			t.Errorf("%s: printing the ring shows key material: %s", name, s)
		}
	}
	bad := map[string]string{
		"empty":        "  \n# only a comment\n",
		"short key":    "a:" + b64[:20],
		"not base64":   "a:" + strings.Repeat("!", 44),
		"duplicate id": "a:" + b64 + ",a:" + b64,
		"bad id":       "a b:" + b64,
	}
	for name, text := range bad {
		_, err := vault.ParseKeyRing(text)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), b64[:20]) {
			t.Errorf("%s: error shows key material: %v", name, err)
		}
	}
}

func TestLegateMasterKeySource(t *testing.T) {
	k, _ := vault.NewKey()
	ring, _ := vault.NewKeyRing(k)
	env := map[string]string{vault.EnvMasterKey: ring.EnvValue(), vault.EnvKeyFile: "/nonexistent"}
	src := vault.SourceFromEnv(func(n string) string { return env[n] }, t.TempDir())
	if src.Writable() || src.String() != vault.EnvMasterKey {
		t.Fatalf("source %v", src)
	}
	delete(env, vault.EnvMasterKey)
	src = vault.SourceFromEnv(func(n string) string { return env[n] }, t.TempDir())
	if src.File != "/nonexistent" || src.Create {
		t.Fatalf("LEGATE_KEY_FILE source %+v", src)
	}
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := vault.New(st.Secrets(), src, nil).LoadKeys(); err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("a missing LEGATE_KEY_FILE: %v", err)
	}
}

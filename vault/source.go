package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The environment variables that name the key source, and the key file's
// default name in the state directory.
const (
	EnvMasterKey = "LEGATE_MASTER_KEY"
	EnvKeyFile   = "LEGATE_KEY_FILE"
	KeyFileName  = "vault.key"
)

// ErrReadOnlySource is returned when a rotation would have to write the
// key ring but the ring comes from the environment; the caller tells the
// operator what to set instead.
var ErrReadOnlySource = errors.New("the key ring comes from the environment and cannot be written")

// KeySource is where the key ring lives: the value of an environment
// variable (read-only) or a file. Set Env or File.
type KeySource struct {
	// Env is the ring itself, in the form ParseKeyRing reads.
	Env string
	// EnvName names the variable Env came from, for messages (default
	// LEGATE_MASTER_KEY).
	EnvName string
	// File is the path of a key ring file.
	File string
	// Create makes File, holding one new key, when it does not exist.
	Create bool
}

// SourceFromEnv picks the key source: $LEGATE_MASTER_KEY when set, else the
// file $LEGATE_KEY_FILE names (which must exist), else vault.key in
// stateDir, created on first use. getenv defaults to os.Getenv.
func SourceFromEnv(getenv func(string) string, stateDir string) KeySource {
	if getenv == nil {
		getenv = os.Getenv
	}
	if v := getenv(EnvMasterKey); v != "" {
		return KeySource{Env: v, EnvName: EnvMasterKey}
	}
	if p := getenv(EnvKeyFile); p != "" {
		return KeySource{File: p}
	}
	return KeySource{File: filepath.Join(stateDir, KeyFileName), Create: true}
}

// Writable reports whether a rotation can write the ring back.
func (s KeySource) Writable() bool { return s.Env == "" }

// String names the source for people: "LEGATE_MASTER_KEY", "key file PATH".
func (s KeySource) String() string {
	if s.Env != "" {
		if s.EnvName == "" {
			return EnvMasterKey
		}
		return s.EnvName
	}
	return "key file " + s.File
}

// load reads the ring; created reports that it made the key file.
func (s KeySource) load() (ring *KeyRing, created bool, err error) {
	if s.Env != "" {
		r, err := ParseKeyRing(s.Env)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", s, err)
		}
		return r, false, nil
	}
	if s.File == "" {
		return nil, false, errors.New("no vault key source: set LEGATE_MASTER_KEY or LEGATE_KEY_FILE")
	}
	b, err := os.ReadFile(s.File)
	if errors.Is(err, fs.ErrNotExist) && s.Create {
		created, err = s.create()
		if err != nil {
			return nil, false, err
		}
		b, err = os.ReadFile(s.File)
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading vault %s: %w", s, err)
	}
	r, err := ParseKeyRing(string(b))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", s, err)
	}
	return r, created, nil
}

// create makes the key file with one new key unless another process made
// it first: the file is written aside and linked into place, so a reader
// never sees it half written.
func (s KeySource) create() (bool, error) {
	k, err := NewKey()
	if err != nil {
		return false, err
	}
	ring, _ := NewKeyRing(k)
	if err := os.MkdirAll(filepath.Dir(s.File), 0o700); err != nil {
		return false, fmt.Errorf("creating vault %s: %w", s, err)
	}
	tmp, err := writeTemp(s.File, ring.fileText())
	if err != nil {
		return false, fmt.Errorf("creating vault %s: %w", s, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, s.File); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("creating vault %s: %w", s, err)
	}
	return true, nil
}

// save replaces the key file with ring, atomically.
func (s KeySource) save(ring *KeyRing) error {
	if !s.Writable() {
		return ErrReadOnlySource
	}
	tmp, err := writeTemp(s.File, ring.fileText())
	if err != nil {
		return fmt.Errorf("writing vault %s: %w", s, err)
	}
	if err := os.Rename(tmp, s.File); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing vault %s: %w", s, err)
	}
	return nil
}

// writeTemp writes data, synced and mode 0600, to a new file beside path.
func writeTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// lockWait bounds how long a rotation waits for another's lock.
const lockWait = 10 * time.Second

// lock serializes changes to the key file among processes with a lock
// file beside it, held only while the ring is read, changed and written.
// For a ring from the environment it does nothing.
func (s KeySource) lock() (unlock func(), err error) {
	if !s.Writable() {
		return func() {}, nil
	}
	path := s.File + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "pid %d at %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("locking vault %s: %w", s, err)
		}
		if time.Now().After(deadline) {
			holder, _ := os.ReadFile(path)
			return nil, fmt.Errorf("vault %s is locked by another rotation (lock file %s: %s); if none is running, remove the lock file",
				s, path, strconv.Quote(string(trimNL(holder))))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

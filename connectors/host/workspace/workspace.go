// Package workspace is the host connector's workspace jail: the one
// directory tree, workspace_root, that the host tools may read and write,
// and nothing beyond it.
//
// Its invariant: nothing a tool does through a [Jail] reaches outside the
// workspace root. Every file operation goes through an [os.Root] opened on
// it, which resolves a path beneath the root, symlinks included, and
// refuses one that would leave it (race-free where the kernel offers
// openat2 with RESOLVE_BENEATH); an absolute path is accepted only when it
// already lies inside the workspace; a file is opened non-blocking, so
// that a FIFO planted there cannot hold a call, and its type is checked on
// the open descriptor; a file with several hard links is refused for
// writing, since its other names may lie outside.
//
// Its errors are canonical ([legate.Error]) and say "host: ...": the
// package serves the host connector.
package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
)

// Jail is the workspace: an os.Root opened at the first use.
type Jail struct {
	path string // as configured, cleaned
	mu   sync.Mutex
	root *os.Root
	real string // path with its own symlinks resolved
}

// New is the workspace at path, the configured workspace_root (cleaned
// here). Nothing is opened until the first use.
func New(path string) *Jail {
	return &Jail{path: filepath.Clean(path)}
}

// Path is the workspace's path as configured, cleaned.
func (j *Jail) Path() string { return j.path }

// Real is the workspace's path with its own symlinks resolved, set at the
// first [Jail.Open]; empty until then.
func (j *Jail) Real() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.real
}

// Open opens the workspace's root at the first call and returns it,
// the same one at every later call until [Jail.Close].
func (j *Jail) Open() (*os.Root, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.root != nil {
		return j.root, nil
	}
	r, err := os.OpenRoot(j.path)
	if err != nil {
		return nil, legate.Errorf(legate.CodeNotFound, "host: workspace_root %s cannot be opened: %v", j.path, err)
	}
	j.real, err = filepath.EvalSymlinks(j.path)
	if err != nil {
		j.real = j.path
	}
	j.root = r
	return r, nil
}

// Close releases the workspace's directory handle, when open.
func (j *Jail) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.root == nil {
		return nil
	}
	err := j.root.Close()
	j.root = nil
	return err
}

// Rel turns a path a caller gave into one relative to the workspace root,
// for the os.Root to resolve. A relative path is taken as it is (the Root
// resolves ".." and symlinks beneath itself and refuses an escape); an
// absolute one is accepted only when it already lies inside the workspace,
// by its configured path or its resolved one.
func (j *Jail) Rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", legate.Errorf(legate.CodeInvalidArgument, "host: path holds a NUL byte")
	}
	if !utf8.ValidString(p) {
		return "", legate.Errorf(legate.CodeInvalidArgument, "host: path is not valid UTF-8")
	}
	if p == "" {
		return ".", nil
	}
	if !filepath.IsAbs(p) {
		return p, nil
	}
	clean := filepath.Clean(p)
	for _, base := range []string{j.path, j.Real()} {
		if base != "" && Within(base, clean) {
			r, err := filepath.Rel(base, clean)
			if err == nil {
				return r, nil
			}
		}
	}
	return "", legate.Errorf(legate.CodePermissionDenied, "host: %s is outside the workspace %s", p, j.path)
}

// Inside reports whether abs (clean) lies in the workspace, by its
// configured path or its resolved one. It reads the path as written: a
// symlink inside that leads out is the kernel's to stop.
func (j *Jail) Inside(abs string) bool {
	real := j.Real()
	return Within(j.path, abs) || (real != "" && Within(real, abs))
}

// Within reports whether p is dir or lies beneath it (both clean, absolute).
func Within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// FSError turns a file operation's error into a canonical one naming the
// path as the caller gave it.
func FSError(op, p string, err error) error {
	var le *legate.Error
	if errors.As(err, &le) {
		return err
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	code := legate.CodeInvalidArgument
	switch {
	case strings.Contains(msg, "escapes from parent") || strings.Contains(msg, "path escapes"):
		return legate.Errorf(legate.CodePermissionDenied, "host: %s %s: the path leads outside the workspace", op, p)
	case errors.Is(err, fs.ErrNotExist):
		code = legate.CodeNotFound
	case errors.Is(err, fs.ErrPermission):
		code = legate.CodePermissionDenied
	case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTEMPTY):
		code = legate.CodeConflict
	}
	return legate.Errorf(code, "host: %s %s: %s", op, p, msg)
}

// OpenRead opens a regular file of the workspace for reading. O_NONBLOCK
// keeps a FIFO planted in the workspace from holding the call; the file's
// type is checked on the open descriptor, not before.
func (j *Jail) OpenRead(p string) (*os.File, fs.FileInfo, error) {
	root, err := j.Open()
	if err != nil {
		return nil, nil, err
	}
	r, err := j.Rel(p)
	if err != nil {
		return nil, nil, err
	}
	return openRegular(root, r, p, "read", os.O_RDONLY, 0)
}

// openRegular opens r of root non-blocking (a FIFO planted there cannot
// hold the call) and checks on the open descriptor that it is a regular
// file; p names it in errors, op says what was being done.
func openRegular(root *os.Root, r, p, op string, flag int, perm os.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(r, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, nil, FSError(op, p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, FSError(op, p, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, legate.Errorf(legate.CodeInvalidArgument, "host: %s is not a regular file", p)
	}
	return f, st, nil
}

// OpenWrite opens (creating it when flag holds O_CREATE) a regular file of
// the workspace for writing, r being p as [Jail.Rel] gave it, and reports
// whether it was created. It does not truncate it: the caller truncates
// once the descriptor is checked. A file with more than one hard link is
// refused: its other names may lie outside the workspace, and writing
// through this one would change them too.
func (j *Jail) OpenWrite(r, p string, flag int) (*os.File, bool, error) {
	root, err := j.Open()
	if err != nil {
		return nil, false, err
	}
	created := false
	if _, err := root.Lstat(r); errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	f, st, err := openRegular(root, r, p, "write", flag, 0o644)
	if err != nil {
		return nil, false, err
	}
	if n, ok := links(st); ok && n > 1 {
		f.Close()
		return nil, false, legate.Errorf(legate.CodePermissionDenied, "host: %s has %d hard links, whose other names may lie outside the workspace: refused", p, n)
	}
	return f, created, nil
}

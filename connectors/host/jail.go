package host

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
)

// rel turns a path a caller gave into one relative to the workspace root,
// for the os.Root to resolve. A relative path is taken as it is (the Root
// resolves ".." and symlinks beneath itself and refuses an escape); an
// absolute one is accepted only when it already lies inside the workspace,
// by its configured path or its resolved one.
func (j *jail) rel(p string) (string, error) {
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
	for _, base := range []string{j.path, j.real} {
		if base != "" && within(base, clean) {
			r, err := filepath.Rel(base, clean)
			if err == nil {
				return r, nil
			}
		}
	}
	return "", legate.Errorf(legate.CodePermissionDenied, "host: %s is outside the workspace %s", p, j.path)
}

// fsError turns a file operation's error into a canonical one naming the
// path as the caller gave it.
func fsError(op, p string, err error) error {
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

// openRead opens a regular file of the workspace for reading. O_NONBLOCK
// keeps a FIFO planted in the workspace from holding the call; the file's
// type is checked on the open descriptor, not before.
func (j *jail) openRead(p string) (*os.File, fs.FileInfo, error) {
	root, err := j.open()
	if err != nil {
		return nil, nil, err
	}
	r, err := j.rel(p)
	if err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(r, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fsError("read", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fsError("read", p, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, legate.Errorf(legate.CodeInvalidArgument, "host: %s is not a regular file", p)
	}
	return f, st, nil
}

// openWrite opens (creating it when flag holds O_CREATE) a regular file of the workspace for writing,
// without truncating it: the caller truncates once the descriptor is
// checked. A file with more than one hard link is refused: its other
// names may lie outside the workspace, and writing through this one
// would change them too.
func (j *jail) openWrite(r, p string, flag int) (*os.File, bool, error) {
	root, err := j.open()
	if err != nil {
		return nil, false, err
	}
	created := false
	if _, err := root.Lstat(r); errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	f, err := root.OpenFile(r, flag|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, false, fsError("write", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fsError("write", p, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, false, legate.Errorf(legate.CodeInvalidArgument, "host: %s is not a regular file", p)
	}
	if n, ok := links(st); ok && n > 1 {
		f.Close()
		return nil, false, legate.Errorf(legate.CodePermissionDenied, "host: %s has %d hard links, whose other names may lie outside the workspace: refused", p, n)
	}
	return f, created, nil
}

// readCapped reads at most max bytes of f, reporting whether more remained.
func readCapped(f io.Reader, max int) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, false, err
	}
	if len(b) > max {
		return b[:max], true, nil
	}
	return b, false, nil
}

// capText cuts s to at most max bytes on a rune boundary, reporting whether
// it was cut.
func capText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	s = s[:max] // a rune cut in two becomes invalid UTF-8, dropped below
	return strings.ToValidUTF8(s, ""), true
}

// binary reports whether b looks like a binary file's content.
func binary(b []byte) bool {
	n := min(len(b), 8000)
	for _, c := range b[:n] {
		if c == 0 {
			return true
		}
	}
	return false
}

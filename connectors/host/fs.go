package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host/workspace"
)

type readArgs struct {
	Path   string `json:"path" jsonschema:"File to read, relative to the workspace (an absolute path must lie inside it)"`
	Offset int    `json:"offset,omitempty" jsonschema:"First line to return, from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many lines to return (default: to the end, within the output cap)"`
}

// ReadResult is fs_read's result.
type ReadResult struct {
	Path       string `json:"path"`
	Content    string `json:"content" jsonschema:"The lines, each prefixed with its number and a tab"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines" jsonschema:"Lines in the part of the file read"`
	Size       int64  `json:"size"`
	Truncated  bool   `json:"truncated" jsonschema:"True when the file or the output was cut at a cap; note says where"`
	Note       string `json:"note,omitempty"`
}

type listArgs struct {
	Path  string `json:"path,omitempty" jsonschema:"Directory to list, relative to the workspace (default: the workspace)"`
	Depth int    `json:"depth,omitempty" jsonschema:"Levels to descend, 1 to 5 (default 1: the directory's own entries)"`
}

// Entry is one file or directory found.
type Entry struct {
	Path string `json:"path"`
	Type string `json:"type" jsonschema:"file, dir, symlink or other"`
	Size int64  `json:"size,omitempty"`
}

// ListResult is the result of fs_list and fs_glob.
type ListResult struct {
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated"`
	Note      string  `json:"note,omitempty"`
}

type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"Glob over paths relative to path: * and ? within a name, ** across directories, [abc] and {a,b} as in a shell, e.g. **/*_test.go"`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search from (default: the workspace)"`
}

type grepArgs struct {
	Pattern    string `json:"pattern" jsonschema:"RE2 regular expression searched line by line"`
	Path       string `json:"path,omitempty" jsonschema:"File or directory to search (default: the workspace)"`
	Glob       string `json:"glob,omitempty" jsonschema:"Only files whose path matches this glob, e.g. **/*.go"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
}

// Match is one matching line.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepResult is fs_grep's result.
type GrepResult struct {
	Matches   []Match `json:"matches"`
	Files     int     `json:"files_searched"`
	Skipped   int     `json:"skipped_large" jsonschema:"Files left out for being over max_file_bytes"`
	Truncated bool    `json:"truncated"`
	Note      string  `json:"note,omitempty"`
}

type writeArgs struct {
	Path    string `json:"path" jsonschema:"File to create or overwrite; missing parent directories are created"`
	Content string `json:"content"`
}

// WriteResult is the result of fs_write and fs_edit.
type WriteResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created,omitempty"`
}

type editArgs struct {
	Path      string `json:"path"`
	OldString string `json:"old_string" jsonschema:"Exact text to replace; it must occur exactly once"`
	NewString string `json:"new_string"`
}

type deleteArgs struct {
	Path string `json:"path" jsonschema:"File, symlink or empty directory to delete"`
}

// DeleteResult is fs_delete's result.
type DeleteResult struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// files is an instance's fs_* tools: its configuration and its workspace.
type files struct {
	cfg  *Config
	jail *workspace.Jail
}

func (c *files) fsTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[ReadResult](connectors.NewTool("fs_read", "Read a text file of the workspace with line numbers, optionally a slice (offset, limit).", legate.ClassRead, c.fsRead)),
		connectors.Returning[ListResult](connectors.NewTool("fs_list", "List a directory of the workspace, optionally a few levels deep.", legate.ClassRead, c.fsList)),
		connectors.Returning[ListResult](connectors.NewTool("fs_glob", "Find files of the workspace by glob pattern, e.g. **/*_test.go.", legate.ClassRead, c.fsGlob)),
		connectors.Returning[GrepResult](connectors.NewTool("fs_grep", "Search the contents of the workspace's text files by RE2 regular expression.", legate.ClassRead, c.fsGrep)),
		connectors.Returning[WriteResult](connectors.NewTool("fs_write", "Create or overwrite a file of the workspace, creating its parent directories.", legate.ClassWrite, c.fsWrite)),
		connectors.Returning[WriteResult](connectors.NewTool("fs_edit", "Replace an exact string in a file of the workspace; refuses a string that is absent or occurs more than once.", legate.ClassWrite, c.fsEdit)),
		connectors.Returning[DeleteResult](connectors.NewTool("fs_delete", "Delete a file or an empty directory of the workspace.", legate.ClassDestructive, c.fsDelete)),
	}
}

func (c *files) fsRead(_ context.Context, _ *connectors.Call, in *readArgs) (*legate.Result, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: offset and limit must not be negative")
	}
	f, st, err := c.jail.OpenRead(in.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, cut, err := readCapped(f, c.cfg.MaxFileBytes)
	if err != nil {
		return nil, workspace.FSError("read", in.Path, err)
	}
	if binary(b) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: %s is a binary file", in.Path)
	}
	out := &ReadResult{Path: in.Path, Size: st.Size(), Truncated: cut}
	if cut {
		out.Note = fmt.Sprintf("the file is %d bytes; only the first %d (max_file_bytes) were read", st.Size(), c.cfg.MaxFileBytes)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	out.TotalLines = len(lines)
	start := max(in.Offset, 1)
	end := len(lines)
	if in.Limit > 0 {
		end = min(end, start-1+in.Limit)
	}
	var sb strings.Builder
	budget := c.cfg.budget()
	out.StartLine = start
	out.EndLine = start - 1
	for i := start; i <= end; i++ {
		line := fmt.Sprintf("%6d\t%s", i, lines[i-1])
		if sb.Len()+len(line) > budget {
			out.Truncated = true
			out.Note = fmt.Sprintf("output cut at max_tool_output_bytes after line %d of %d; read on with offset %d", i-1, end, i)
			break
		}
		sb.WriteString(line)
		out.EndLine = i
	}
	out.Content = sb.String()
	return &legate.Result{Structured: out}, nil
}

// budget is how many bytes of content a result may carry, leaving room for
// its other fields within max_tool_output_bytes.
func (cfg *Config) budget() int { return max(cfg.MaxToolOutputBytes-512, 256) }

// walk visits the entries beneath dir (relative to the root), not following
// symlinks, calling fn with each path relative to the workspace. depth 0 is
// unlimited.
//
// fn gets each entry's path relative to the workspace and relative to p; a
// p naming a file is visited alone.
func (c *files) walk(p string, depth int, fn func(rel, sub string, d fs.DirEntry) error) error {
	root, err := c.jail.Open()
	if err != nil {
		return err
	}
	r, err := c.jail.Rel(p)
	if err != nil {
		return err
	}
	st, err := root.Stat(r)
	if err != nil {
		return workspace.FSError("list", p, err)
	}
	if !st.IsDir() {
		err := fn(filepath.ToSlash(filepath.Clean(r)), path.Base(filepath.ToSlash(r)), fs.FileInfoToDirEntry(st))
		if err != nil && !errors.Is(err, errFull) {
			return err
		}
		return nil
	}
	// A symlinked directory given as path is resolved inside the root once;
	// WalkDir never follows the links it meets below it.
	sub, err := root.OpenRoot(r)
	if err != nil {
		return workspace.FSError("list", p, err)
	}
	defer sub.Close()
	base := filepath.ToSlash(filepath.Clean(r))
	err = fs.WalkDir(sub.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			return nil // an unreadable entry is skipped, not fatal
		}
		if name == "." {
			return nil
		}
		if depth > 0 && strings.Count(name, "/")+1 > depth {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return fn(path.Join(base, name), name, d)
	})
	if err != nil && !errors.Is(err, errFull) {
		return workspace.FSError("list", p, err)
	}
	return nil
}

// errFull stops a walk whose result is full.
var errFull = errors.New("result full")

func entryOf(rel string, d fs.DirEntry) Entry {
	e := Entry{Path: rel, Type: "other"}
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		e.Type = "symlink"
	case d.IsDir():
		e.Type = "dir"
	case d.Type().IsRegular():
		e.Type = "file"
		if info, err := d.Info(); err == nil {
			e.Size = info.Size()
		}
	}
	return e
}

func (c *files) fsList(_ context.Context, _ *connectors.Call, in *listArgs) (*legate.Result, error) {
	depth := in.Depth
	if depth == 0 {
		depth = 1
	}
	if depth < 1 || depth > 5 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: depth must be 1 to 5, got %d", in.Depth)
	}
	return c.collect(in.Path, depth, func(string) bool { return true })
}

func (c *files) fsGlob(_ context.Context, _ *connectors.Call, in *globArgs) (*legate.Result, error) {
	match, err := globMatcher(in.Pattern)
	if err != nil {
		return nil, err
	}
	return c.collect(in.Path, 0, match)
}

// collect lists the entries beneath p whose path relative to p keep
// accepts, within the output cap.
func (c *files) collect(p string, depth int, keep func(sub string) bool) (*legate.Result, error) {
	out := &ListResult{Entries: []Entry{}}
	size, budget := 0, c.cfg.budget()
	err := c.walk(p, depth, func(rel, sub string, d fs.DirEntry) error {
		if !keep(sub) {
			return nil
		}
		e := entryOf(rel, d)
		size += len(e.Path) + 40
		if size > budget {
			out.Truncated = true
			out.Note = fmt.Sprintf("cut at max_tool_output_bytes after %d entries; narrow the path or pattern", len(out.Entries))
			return errFull
		}
		out.Entries = append(out.Entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out}, nil
}

func (c *files) fsGrep(ctx context.Context, _ *connectors.Call, in *grepArgs) (*legate.Result, error) {
	re, err := grepRegexp(in.Pattern, in.IgnoreCase)
	if err != nil {
		return nil, err
	}
	var only func(string) bool
	if in.Glob != "" {
		if only, err = globMatcher(in.Glob); err != nil {
			return nil, err
		}
	}
	out := &GrepResult{Matches: []Match{}}
	size, budget := 0, c.cfg.budget()
	root, err := c.jail.Open()
	if err != nil {
		return nil, err
	}
	err = c.walk(in.Path, 0, func(rel, sub string, d fs.DirEntry) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() || (only != nil && !only(sub)) {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > int64(c.cfg.MaxFileBytes) {
			out.Skipped++
			return nil
		}
		b, err := readRegular(root, filepath.FromSlash(rel), c.cfg.MaxFileBytes)
		if err != nil || binary(b) {
			return nil
		}
		out.Files++
		for i, line := range bytes.Split(b, []byte("\n")) {
			if !re.Match(line) {
				continue
			}
			text, _ := capText(string(line), 300)
			size += len(rel) + len(text) + 40
			if size > budget {
				out.Truncated = true
				out.Note = fmt.Sprintf("cut at max_tool_output_bytes after %d matches; narrow the pattern, path or glob", len(out.Matches))
				return errFull
			}
			out.Matches = append(out.Matches, Match{Path: rel, Line: i + 1, Text: text})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out}, nil
}

func (c *files) fsWrite(_ context.Context, _ *connectors.Call, in *writeArgs) (*legate.Result, error) {
	if len(in.Content) > c.cfg.MaxFileBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: content is %d bytes, over max_file_bytes (%d)", len(in.Content), c.cfg.MaxFileBytes)
	}
	root, err := c.jail.Open()
	if err != nil {
		return nil, err
	}
	r, err := c.jail.Rel(in.Path)
	if err != nil {
		return nil, err
	}
	if err := makeParents(root, r, in.Path); err != nil {
		return nil, err
	}
	f, created, err := c.jail.OpenWrite(r, in.Path, os.O_WRONLY|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return nil, workspace.FSError("write", in.Path, err)
	}
	if _, err := f.WriteString(in.Content); err != nil {
		return nil, workspace.FSError("write", in.Path, err)
	}
	if err := f.Close(); err != nil {
		return nil, workspace.FSError("write", in.Path, err)
	}
	return &legate.Result{Structured: &WriteResult{Path: in.Path, Bytes: len(in.Content), Created: created}}, nil
}

func (c *files) fsEdit(_ context.Context, _ *connectors.Call, in *editArgs) (*legate.Result, error) {
	if in.OldString == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: old_string is empty")
	}
	r, err := c.jail.Rel(in.Path)
	if err != nil {
		return nil, err
	}
	f, _, err := c.jail.OpenWrite(r, in.Path, os.O_RDWR)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, cut, err := readCapped(f, c.cfg.MaxFileBytes)
	if err != nil {
		return nil, workspace.FSError("edit", in.Path, err)
	}
	if cut {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: %s is over max_file_bytes (%d)", in.Path, c.cfg.MaxFileBytes)
	}
	switch n := strings.Count(string(b), in.OldString); {
	case n == 0:
		return nil, legate.Errorf(legate.CodeNotFound, "host: old_string does not occur in %s", in.Path)
	case n > 1:
		return nil, legate.Errorf(legate.CodeConflict, "host: old_string occurs %d times in %s; give more context so that it occurs once", n, in.Path)
	}
	next := strings.Replace(string(b), in.OldString, in.NewString, 1)
	if len(next) > c.cfg.MaxFileBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: the edit would make %s larger than max_file_bytes (%d)", in.Path, c.cfg.MaxFileBytes)
	}
	if err := f.Truncate(0); err != nil {
		return nil, workspace.FSError("edit", in.Path, err)
	}
	if _, err := f.WriteAt([]byte(next), 0); err != nil {
		return nil, workspace.FSError("edit", in.Path, err)
	}
	if err := f.Close(); err != nil {
		return nil, workspace.FSError("edit", in.Path, err)
	}
	return &legate.Result{Structured: &WriteResult{Path: in.Path, Bytes: len(next)}}, nil
}

func (c *files) fsDelete(_ context.Context, _ *connectors.Call, in *deleteArgs) (*legate.Result, error) {
	root, err := c.jail.Open()
	if err != nil {
		return nil, err
	}
	r, err := c.jail.Rel(in.Path)
	if err != nil {
		return nil, err
	}
	if filepath.Clean(r) == "." {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: the workspace itself cannot be deleted")
	}
	st, err := root.Lstat(r)
	if err != nil {
		return nil, workspace.FSError("delete", in.Path, err)
	}
	e := entryOf(in.Path, fs.FileInfoToDirEntry(st))
	if err := root.Remove(r); err != nil {
		return nil, workspace.FSError("delete", in.Path, err)
	}
	return &legate.Result{Structured: &DeleteResult{Path: in.Path, Type: e.Type}}, nil
}

// makeParents creates the missing parent directories of r (relative to
// root), once the whole path is known to resolve inside the root: a write
// refused as an escape creates nothing. r is used as given, never
// cleaned: "sub/up/../x" with sub/up a link to ".." names the parent of
// the link's target, not sub/x, and only the root's own resolution, which
// follows the link before the "..", says which.
//
// Each existing prefix of the parent is resolved by the root, which
// refuses one that leads outside. Past the first missing component the
// rest is created, and a ".." there (out of a directory that does not
// exist yet) is refused rather than reasoned about. Between this check
// and the creation a swapped symlink can still make MkdirAll fail half
// way, but only inside the root: os.Root never creates outside it.
func makeParents(root *os.Root, r, p string) error {
	parts := strings.Split(filepath.ToSlash(r), "/")
	parts = parts[:len(parts)-1] // the file itself
	prefix, missing := "", false
	for _, part := range parts {
		if part == "" || part == "." {
			continue
		}
		if prefix != "" {
			prefix += "/"
		}
		prefix += part
		if missing {
			if part == ".." {
				return legate.Errorf(legate.CodeInvalidArgument, "host: write %s: the path climbs (..) out of a directory that does not exist", p)
			}
			continue
		}
		st, err := root.Stat(prefix)
		switch {
		case errors.Is(err, fs.ErrNotExist) && part != "..":
			missing = true
		case err != nil:
			return workspace.FSError("write", p, err)
		case !st.IsDir():
			return legate.Errorf(legate.CodeInvalidArgument, "host: write %s: %s is not a directory", p, prefix)
		}
	}
	if !missing {
		return nil
	}
	if err := root.MkdirAll(prefix, 0o755); err != nil {
		return workspace.FSError("write", p, err)
	}
	return nil
}

// readRegular reads a regular file of root, at most max bytes, opened
// non-blocking and checked on the descriptor: an entry swapped for a FIFO
// after the walk saw a file does not hold the call.
func readRegular(root *os.Root, name string, max int) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	b, _, err := readCapped(f, max)
	return b, err
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

// globMatcher checks a glob over slash-separated relative paths once and
// returns its matcher: * and ? match within one name, ** any number of
// whole names ("**/" may match none), [...] a class and {a,b} either.
func globMatcher(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern is empty")
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern %q is not a valid glob", pattern)
	}
	return func(p string) bool { return doublestar.MatchUnvalidated(pattern, p) }, nil
}

// grepRegexp compiles an RE2 expression, a failure being the caller's.
func grepRegexp(pattern string, ignoreCase bool) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern is empty")
	}
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern: %v", err)
	}
	return re, nil
}

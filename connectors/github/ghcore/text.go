package ghcore

import (
	"slices"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
)

// ChangedFile is a file a pull request or a commit changes.
type ChangedFile struct {
	Path         string `json:"path"`
	Status       string `json:"status" jsonschema:"added, removed, modified, renamed, copied, changed, unchanged"`
	PreviousPath string `json:"previous_path,omitempty"`
	Additions    int    `json:"additions"`
	Deletions    int    `json:"deletions"`
}

// OneOf checks an enumerated argument; "" gives the first value.
func OneOf(field, v string, values ...string) (string, error) {
	if v == "" {
		return values[0], nil
	}
	if !slices.Contains(values, v) {
		return "", legate.Errorf(legate.CodeInvalidArgument, "github: %s: one of %s, got %q", field, strings.Join(values, ", "), v)
	}
	return v, nil
}

// CheckText checks a title and a body to send.
func CheckText(title, body string) error {
	switch {
	case strings.TrimSpace(title) == "":
		return legate.Errorf(legate.CodeInvalidArgument, "github: title: must not be empty")
	case len(title) > MaxTitleBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "github: title: at most %d bytes, got %d; shorten it", MaxTitleBytes, len(title))
	case len(body) > MaxBodyBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "github: body: at most %d bytes, got %d; shorten it", MaxBodyBytes, len(body))
	}
	return nil
}

// CheckBody checks a comment's or a review's text.
func CheckBody(body string) error {
	if strings.TrimSpace(body) == "" {
		return legate.Errorf(legate.CodeInvalidArgument, "github: body: must not be empty")
	}
	return CheckText("-", body)
}

// Cut returns at most n bytes of s from off, cut back to a line's end
// when the text goes on, and the offset to go on from (0 at the end).
func Cut(s string, off, n int) (string, int) {
	if off >= len(s) {
		return "", 0
	}
	s = s[off:]
	if len(s) <= n {
		return s, 0
	}
	part := s[:n]
	if i := strings.LastIndexByte(part, '\n'); i > 0 {
		part = part[:i+1]
	}
	return part, off + len(part)
}

// ChangedFiles converts the files of a pull request or a commit.
func ChangedFiles(files []*github.CommitFile) []ChangedFile {
	out := make([]ChangedFile, 0, len(files))
	for _, f := range files {
		out = append(out, ChangedFile{Path: f.GetFilename(), Status: f.GetStatus(), PreviousPath: f.GetPreviousFilename(), Additions: f.GetAdditions(), Deletions: f.GetDeletions()})
	}
	return out
}

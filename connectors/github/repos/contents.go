// Package repos holds the github connector's repos toolset: contents,
// commits, branches and releases; put a file, create a branch.
package repos

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// Bounds of the repos toolset.
const (
	// MaxFileBytes bounds the text get_file returns; offset reads on.
	MaxFileBytes = 60000
	// MaxPutBytes bounds the content put_file writes.
	MaxPutBytes = 1 << 20
)

// Tools are the tools of the repos toolset.
type Tools struct{ *ghcore.Core }

// Content is a file's text or a directory's entries, at a ref.
type Content struct {
	Path       string  `json:"path"`
	Ref        string  `json:"ref,omitempty" jsonschema:"the branch, tag or commit read; the default branch when absent"`
	Type       string  `json:"type" jsonschema:"file or dir"`
	SHA        string  `json:"sha,omitempty" jsonschema:"the blob's sha: pass it to put_file to update the file"`
	Size       int     `json:"size,omitempty"`
	Text       string  `json:"text,omitempty" jsonschema:"the file's text from offset, at most the connector's limit"`
	Binary     bool    `json:"binary,omitempty" jsonschema:"the file is not text; it is not returned"`
	Truncated  bool    `json:"truncated,omitempty" jsonschema:"the text goes on: call again with offset = next_offset"`
	NextOffset int     `json:"next_offset,omitempty"`
	Entries    []Entry `json:"entries,omitempty" jsonschema:"a directory's files and directories"`
	URL        string  `json:"url,omitempty"`
}

// Entry is one entry of a directory.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type" jsonschema:"file, dir, symlink or submodule"`
	Size int    `json:"size,omitempty"`
}

// FileCommit is the commit put_file made.
type FileCommit struct {
	Path      string `json:"path"`
	Branch    string `json:"branch"`
	SHA       string `json:"sha" jsonschema:"the file's new blob sha"`
	CommitSHA string `json:"commit_sha"`
	URL       string `json:"url,omitempty"`
}

// Branch is a branch and its head commit.
type Branch struct {
	Name      string `json:"name"`
	SHA       string `json:"sha"`
	Protected bool   `json:"protected,omitempty"`
}

// Commit is a commit, with its stats and files when read alone.
type Commit struct {
	SHA       string               `json:"sha"`
	Message   string               `json:"message"`
	Author    string               `json:"author" jsonschema:"the author's name, and login when GitHub knows it"`
	Date      time.Time            `json:"date,omitzero"`
	URL       string               `json:"url,omitempty"`
	Parents   []string             `json:"parents,omitempty"`
	Additions int                  `json:"additions,omitempty"`
	Deletions int                  `json:"deletions,omitempty"`
	Files     []ghcore.ChangedFile `json:"files,omitempty" jsonschema:"the files changed, at most 300 (GitHub's first page)"`
}

// Release is a release of a repository.
type Release struct {
	ID          int64         `json:"id"`
	Tag         string        `json:"tag"`
	Name        string        `json:"name,omitempty"`
	Body        string        `json:"body,omitempty"`
	Draft       bool          `json:"draft,omitempty"`
	Prerelease  bool          `json:"prerelease,omitempty"`
	Author      *model.Person `json:"author,omitempty"`
	PublishedAt time.Time     `json:"published_at,omitzero"`
	URL         string        `json:"url,omitempty"`
	Assets      []string      `json:"assets,omitempty" jsonschema:"the assets' names"`
}

type getFileIn struct {
	ghcore.RepoIn
	Path   string `json:"path" jsonschema:"the file's or directory's path; empty for the root"`
	Ref    string `json:"ref,omitempty" jsonschema:"a branch, tag or commit; the default branch when absent"`
	Offset int    `json:"offset,omitempty" jsonschema:"where in the file's text to start, in bytes: next_offset of the previous call"`
}

type listCommitsIn struct {
	ghcore.RepoPageIn
	SHA    string    `json:"sha,omitempty" jsonschema:"a branch or commit to list from; the default branch when absent"`
	Path   string    `json:"path,omitempty" jsonschema:"only commits touching this path"`
	Author string    `json:"author,omitempty" jsonschema:"only commits by this login or email"`
	Since  time.Time `json:"since,omitzero" jsonschema:"only commits after this time (RFC 3339)"`
}

type getCommitIn struct {
	ghcore.RepoIn
	SHA string `json:"sha" jsonschema:"the commit's sha (or a branch or tag)"`
}

// List returns the toolset's tools.
func (t Tools) List() []connectors.Tool {
	page := fmt.Sprintf(" A page at a time: limit (default %d, at most %d) and cursor.", ghcore.DefaultPage, ghcore.MaxPage)
	return append([]connectors.Tool{
		connectors.Returning[Content](connectors.NewTool("get_file",
			fmt.Sprintf("Read a file's text (at most %d bytes from offset; truncated and next_offset say when it goes on; a binary file says so) or a directory's entries, at a ref.", MaxFileBytes),
			legate.ClassRead, t.file)),
		connectors.Returning[saas.List[Commit]](connectors.NewTool("list_commits",
			"List commits, newest first: from a branch or sha, touching a path, by an author, since a time."+page, legate.ClassRead, t.commits)),
		connectors.Returning[Commit](connectors.NewTool("get_commit",
			"Read a commit: message, author, parents, additions and deletions, and the files it changed.", legate.ClassRead, t.commit)),
		connectors.Returning[saas.List[Branch]](connectors.NewTool("list_branches",
			"List a repository's branches and their head commits."+page, legate.ClassRead, t.branches)),
		connectors.Returning[saas.List[Release]](connectors.NewTool("list_releases",
			"List a repository's releases, newest first."+page, legate.ClassRead, t.releases)),
		connectors.Returning[Release](connectors.NewTool("get_latest_release",
			"Read a repository's latest published release (not a draft or prerelease).", legate.ClassRead, t.latest)),
	}, writes{t}.list()...)
}

func (t Tools) file(ctx context.Context, call *connectors.Call, in *getFileIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	if in.Offset < 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: offset: must not be negative")
	}
	var out Content
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		f, dir, _, err := api.Repositories.GetContents(ctx, owner, name, in.Path, &github.RepositoryContentGetOptions{Ref: in.Ref})
		if err != nil {
			return err
		}
		out = Content{Path: in.Path, Ref: in.Ref, Type: "dir"}
		if f == nil {
			for _, e := range dir {
				out.Entries = append(out.Entries, Entry{Name: e.GetName(), Type: e.GetType(), Size: e.GetSize()})
			}
			return nil
		}
		out = Content{Path: f.GetPath(), Ref: in.Ref, Type: f.GetType(), SHA: f.GetSHA(), Size: f.GetSize(), URL: f.GetHTMLURL()}
		if f.GetEncoding() == "none" {
			return legate.Errorf(legate.CodeInvalidArgument, "github: %s is %d bytes, more than the contents API gives; clone the repository to read it", f.GetPath(), f.GetSize())
		}
		text, err := f.GetContent()
		if err != nil {
			return saas.Mapping("github", "file content that does not decode")
		}
		if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
			out.Binary = true
			return nil
		}
		out.Text, out.NextOffset = ghcore.Cut(text, in.Offset, MaxFileBytes)
		out.Truncated = out.NextOffset > 0
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: contentText(out)}, nil
}

func contentText(c Content) string {
	switch {
	case c.Type == "dir":
		var b strings.Builder
		fmt.Fprintf(&b, "%s/ (%d entries)", c.Path, len(c.Entries))
		for _, e := range c.Entries {
			fmt.Fprintf(&b, "\n  %s %s", e.Type, e.Name)
		}
		return b.String()
	case c.Binary:
		return fmt.Sprintf("%s: a binary file of %d bytes, not shown", c.Path, c.Size)
	case c.Truncated:
		return fmt.Sprintf("%s (sha %s)\n%s\n[cut at byte %d of %d: call again with offset %d]", c.Path, c.SHA, c.Text, c.NextOffset, c.Size, c.NextOffset)
	}
	return fmt.Sprintf("%s (sha %s)\n%s", c.Path, c.SHA, c.Text)
}

func commitOf(rc *github.RepositoryCommit) Commit {
	gc := rc.GetCommit()
	out := Commit{SHA: rc.GetSHA(), Message: gc.GetMessage(), Author: gc.GetAuthor().GetName(), Date: ghcore.UTC(gc.GetAuthor().Date), URL: rc.GetHTMLURL(),
		Additions: rc.GetStats().GetAdditions(), Deletions: rc.GetStats().GetDeletions()}
	if l := rc.GetAuthor().GetLogin(); l != "" {
		out.Author += " (" + l + ")"
	}
	for _, p := range rc.Parents {
		out.Parents = append(out.Parents, p.GetSHA())
	}
	if len(rc.Files) > 0 {
		out.Files = ghcore.ChangedFiles(rc.Files)
	}
	return out
}

func commitLine(c Commit) string {
	first, _, _ := strings.Cut(c.Message, "\n")
	return fmt.Sprintf("%.7s %s — %s, %s", c.SHA, first, c.Author, c.Date.Format(time.DateOnly))
}

func (t Tools) commits(ctx context.Context, call *connectors.Call, in *listCommitsIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Commit, *github.Response, error) {
		got, resp, err := api.Repositories.ListCommits(ctx, owner, name, &github.CommitsListOptions{SHA: in.SHA, Path: in.Path, Author: in.Author, Since: in.Since, ListOptions: lo})
		var items []Commit
		for _, rc := range got {
			items = append(items, commitOf(rc))
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "commit(s)", commitLine), nil
}

func (t Tools) commit(ctx context.Context, call *connectors.Call, in *getCommitIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	if in.SHA == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: sha: give the commit's sha, a branch or a tag")
	}
	var out Commit
	var by string // its author's login, else the name the commit gives
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		rc, _, err := api.Repositories.GetCommit(ctx, owner, name, in.SHA, &github.ListOptions{PerPage: 300})
		if err == nil {
			out, by = commitOf(rc), cmp.Or(rc.GetAuthor().GetLogin(), rc.GetCommit().GetAuthor().GetName())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s by %s, %s: +%d -%d\n%s", out.SHA, out.Author, out.Date.Format(time.RFC3339), out.Additions, out.Deletions, out.Message)
	for _, f := range out.Files {
		fmt.Fprintf(&b, "\n  %s %s +%d -%d", f.Status, f.Path, f.Additions, f.Deletions)
	}
	return &legate.Result{Structured: out, Text: b.String(), Meta: provenance.Author(by)}, nil
}

func (t Tools) branches(ctx context.Context, call *connectors.Call, in *ghcore.RepoPageIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Branch, *github.Response, error) {
		got, resp, err := api.Repositories.ListBranches(ctx, owner, name, &github.BranchListOptions{ListOptions: lo})
		var items []Branch
		for _, b := range got {
			items = append(items, Branch{Name: b.GetName(), SHA: b.GetCommit().GetSHA(), Protected: b.GetProtected()})
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "branch(es)", func(b Branch) string { return fmt.Sprintf("%s %.7s", b.Name, b.SHA) }), nil
}

func releaseOf(r *github.RepositoryRelease) Release {
	out := Release{ID: r.GetID(), Tag: r.GetTagName(), Name: r.GetName(), Body: r.GetBody(), Draft: r.GetDraft(), Prerelease: r.GetPrerelease(),
		Author: ghcore.Person(r.GetAuthor()), PublishedAt: ghcore.UTC(r.PublishedAt), URL: r.GetHTMLURL()}
	for _, a := range r.Assets {
		out.Assets = append(out.Assets, a.GetName())
	}
	return out
}

func releaseLine(r Release) string {
	return fmt.Sprintf("%s %s (%s) %s", r.Tag, r.Name, r.PublishedAt.Format(time.DateOnly), r.URL)
}

func (t Tools) releases(ctx context.Context, call *connectors.Call, in *ghcore.RepoPageIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Release, *github.Response, error) {
		got, resp, err := api.Repositories.ListReleases(ctx, owner, name, &lo)
		var items []Release
		for _, r := range got {
			items = append(items, releaseOf(r))
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "release(s)", releaseLine), nil
}

func (t Tools) latest(ctx context.Context, call *connectors.Call, in *ghcore.RepoIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	var out Release
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		r, _, err := api.Repositories.GetLatestRelease(ctx, owner, name)
		if err == nil {
			out = releaseOf(r)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: releaseLine(out) + "\n\n" + out.Body, Meta: ghcore.AuthorMeta(out.Author)}, nil
}

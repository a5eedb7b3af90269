package repos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/connectors/saas"
)

// writes are the writes of the repos toolset.
type writes struct{ Tools }

type putFileIn struct {
	ghcore.RepoIn
	Path    string `json:"path" jsonschema:"the file's path"`
	Branch  string `json:"branch" jsonschema:"the branch to commit to"`
	Content string `json:"content" jsonschema:"the file's whole new text"`
	Message string `json:"message" jsonschema:"the commit message"`
	SHA     string `json:"sha,omitempty" jsonschema:"the sha get_file gave of the file replaced; absent to create a new file"`
}

type createBranchIn struct {
	ghcore.RepoIn
	Branch string `json:"branch" jsonschema:"the new branch's name"`
	From   string `json:"from,omitempty" jsonschema:"the branch, tag or commit it starts at; the default branch when absent"`
}

func (t writes) list() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[FileCommit](connectors.NewTool("put_file",
			"Create a file, or replace one (give the sha get_file returned), with one commit on a branch. "+saas.OnceNote, legate.ClassWrite, t.put)),
		connectors.Returning[Branch](connectors.NewTool("create_branch",
			"Create a branch at a branch, tag or commit (the default branch when from is absent). "+saas.OnceNote, legate.ClassWrite, t.branch)),
	}
}

func (t writes) put(ctx context.Context, call *connectors.Call, in *putFileIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	switch {
	case in.Path == "" || in.Branch == "" || strings.TrimSpace(in.Message) == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: give path, branch and message")
	case len(in.Content) > MaxPutBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: content: at most %d bytes, got %d", MaxPutBytes, len(in.Content))
	}
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, _ string) (*FileCommit, error) {
		opts := &github.RepositoryContentFileOptions{Message: &in.Message, Content: []byte(in.Content), Branch: &in.Branch}
		if in.SHA != "" {
			opts.SHA = &in.SHA
		}
		res, _, err := api.Repositories.CreateFile(ctx, owner, name, in.Path, opts) // PUT: creates or, with sha, updates
		if err != nil {
			return nil, err
		}
		return &FileCommit{Path: in.Path, Branch: in.Branch, SHA: res.GetContent().GetSHA(), CommitSHA: res.Commit.GetSHA(), URL: res.Commit.GetHTMLURL()}, nil
	}, func(ctx context.Context, api *github.Client, _ func() (string, error), _ string, since time.Time) (*FileCommit, error) {
		// Lost: the file on the branch holds the content, by a commit
		// to it made since.
		f, _, _, err := api.Repositories.GetContents(ctx, owner, name, in.Path, &github.RepositoryContentGetOptions{Ref: in.Branch})
		if err != nil {
			if ghcore.IsNotFound(ctx, err) {
				return nil, nil
			}
			return nil, err
		}
		if f == nil { // a directory there
			return nil, nil
		}
		if text, err := f.GetContent(); err != nil || text != in.Content {
			return nil, nil
		}
		cs, _, err := api.Repositories.ListCommits(ctx, owner, name, &github.CommitsListOptions{SHA: in.Branch, Path: in.Path, Since: since, ListOptions: github.ListOptions{PerPage: 1}})
		if err != nil || len(cs) == 0 {
			return nil, err
		}
		return &FileCommit{Path: in.Path, Branch: in.Branch, SHA: f.GetSHA(), CommitSHA: cs[0].GetSHA(), URL: cs[0].GetHTMLURL()}, nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("committed %s to %s: %s", out.Path, out.Branch, out.CommitSHA)}, nil
}

func (t writes) branch(ctx context.Context, call *connectors.Call, in *createBranchIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	if in.Branch == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: branch: give the new branch's name")
	}
	var sha string
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		from := in.From
		if from == "" {
			r, _, err := api.Repositories.Get(ctx, owner, name)
			if err != nil {
				return err
			}
			from = r.GetDefaultBranch()
		}
		rc, _, err := api.Repositories.GetCommit(ctx, owner, name, from, &github.ListOptions{PerPage: 1})
		sha = rc.GetSHA()
		return err
	})
	if err != nil {
		return nil, err
	}
	ref := "refs/heads/" + in.Branch
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, _ string) (*Branch, error) {
		r, _, err := api.Git.CreateRef(ctx, owner, name, github.CreateRef{Ref: ref, SHA: sha})
		if err != nil {
			return nil, err
		}
		return &Branch{Name: in.Branch, SHA: r.GetObject().GetSHA()}, nil
	}, func(ctx context.Context, api *github.Client, _ func() (string, error), _ string, _ time.Time) (*Branch, error) {
		// Lost: the branch is there, at the commit.
		r, _, err := api.Git.GetRef(ctx, owner, name, "heads/"+in.Branch)
		if err != nil {
			if ghcore.IsNotFound(ctx, err) {
				return nil, nil
			}
			return nil, err
		}
		if r.GetObject().GetSHA() != sha {
			return nil, nil
		}
		return &Branch{Name: in.Branch, SHA: sha}, nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("created branch %s at %s", out.Name, out.SHA)}, nil
}

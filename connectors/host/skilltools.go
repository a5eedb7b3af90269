package host

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host/skills"
	"github.com/legate-mcp/legate/connectors/host/workspace"
)

type skillArgs struct {
	Name string `json:"name" jsonschema:"The skill's name, as skills_list gives it"`
}

type skillFileArgs struct {
	Name string `json:"name" jsonschema:"The skill's name"`
	Path string `json:"path" jsonschema:"A file of the skill, relative to its directory, as skills_load lists it"`
}

// SkillSummary is one enabled skill in skills_list.
type SkillSummary struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
	Version     string   `json:"version,omitempty"`
}

// SkillsListResult is skills_list's result.
type SkillsListResult struct {
	Skills []SkillSummary `json:"skills"`
}

// SkillLoadResult is skills_load's result.
type SkillLoadResult struct {
	Name      string   `json:"name"`
	Content   string   `json:"content" jsonschema:"SKILL.md in full"`
	Files     []string `json:"files" jsonschema:"The skill's other files, for skills_file"`
	Truncated bool     `json:"truncated"`
}

// SkillFileResult is skills_file's result.
type SkillFileResult struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

// skillTools are the skills_* tools of an instance, over its library.
type skillTools struct {
	lib     *skills.Library
	budget  int // bytes of content a result may carry
	maxFile int
}

func (c *skillTools) tools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[SkillsListResult](connectors.NewTool("skills_list", "List the procedures (skills) enabled on this machine: name and when to use each.", legate.ClassRead, c.skillsList)),
		connectors.Returning[SkillLoadResult](connectors.NewTool("skills_load", "Read one skill in full before acting on what it covers.", legate.ClassRead, c.skillsLoad)),
		connectors.Returning[SkillFileResult](connectors.NewTool("skills_file", "Read a script or template bundled with a skill.", legate.ClassRead, c.skillsFile)),
	}
}

// enabledSkill is an installed, enabled, usable skill.
func (c *skillTools) enabledSkill(name string) (skills.Skill, error) {
	s, err := c.lib.Get(name)
	if err != nil {
		return s, err
	}
	if !s.Enabled || s.Err != "" {
		return s, legate.Errorf(legate.CodeNotFound, "skills: %s is not enabled", name)
	}
	return s, nil
}

func (c *skillTools) skillsList(context.Context, *connectors.Call, *noArgs) (*legate.Result, error) {
	all, err := c.lib.List()
	if err != nil {
		return nil, legate.Errorf(legate.CodeTransient, "skills: %v", err)
	}
	out := &SkillsListResult{Skills: []SkillSummary{}}
	for _, s := range all {
		if s.Enabled && s.Err == "" {
			out.Skills = append(out.Skills, SkillSummary{Name: s.Name, Description: s.Description, Tags: s.Tags, Version: s.Version})
		}
	}
	return &legate.Result{Structured: out}, nil
}

func (c *skillTools) skillsLoad(_ context.Context, _ *connectors.Call, in *skillArgs) (*legate.Result, error) {
	if _, err := c.enabledSkill(in.Name); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(filepath.Join(c.lib.Dir(), in.Name))
	if err != nil {
		return nil, legate.Errorf(legate.CodeNotFound, "skills: %s: %v", in.Name, err)
	}
	defer root.Close()
	b, err := root.ReadFile(skills.SkillFile)
	if err != nil {
		return nil, workspace.FSError("read", skills.SkillFile, err)
	}
	out := &SkillLoadResult{Name: in.Name, Files: []string{}}
	out.Content, out.Truncated = capText(string(b), c.budget)
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && p != skills.SkillFile && p != skills.MetaFile && len(out.Files) < 200 {
			out.Files = append(out.Files, p)
		}
		return nil
	})
	return &legate.Result{Structured: out}, nil
}

func (c *skillTools) skillsFile(_ context.Context, _ *connectors.Call, in *skillFileArgs) (*legate.Result, error) {
	if _, err := c.enabledSkill(in.Name); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(filepath.Join(c.lib.Dir(), in.Name))
	if err != nil {
		return nil, legate.Errorf(legate.CodeNotFound, "skills: %s: %v", in.Name, err)
	}
	defer root.Close()
	r, err := workspace.New(filepath.Join(c.lib.Dir(), in.Name)).Rel(in.Path)
	if err != nil || filepath.IsAbs(in.Path) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "skills: give a path relative to the skill")
	}
	f, err := root.OpenFile(r, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, workspace.FSError("read", in.Path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "skills: %s is not a file", in.Path)
	}
	b, cut, err := readCapped(f, min(c.maxFile, c.budget))
	if err != nil {
		return nil, workspace.FSError("read", in.Path, err)
	}
	out := &SkillFileResult{Name: in.Name, Path: in.Path, Truncated: cut}
	out.Content, _ = capText(string(b), c.budget)
	return &legate.Result{Structured: out}, nil
}

// Package skills is the skills library of one machine, on disk: skills in
// the Agent Skills format, one directory each, as the host connector
// serves them and `legate skills` manages them.
//
// A skill is a directory holding SKILL.md, whose YAML front matter gives
// its name and description (tags and version are optional, other keys are
// kept as they are), then the procedure; and any files the procedure
// refers to. The library keeps one directory per skill, named after it,
// with .legate.json beside SKILL.md saying where it came from and whether
// it is enabled.
package skills

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
)

// Skill is one installed skill as the library lists it.
type Skill struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Tags        []string  `json:"tags,omitempty"`
	Version     string    `json:"version,omitempty"`
	Enabled     bool      `json:"enabled"`
	Source      string    `json:"source,omitempty"`
	Commit      string    `json:"commit,omitempty"`
	InstalledAt time.Time `json:"installed_at,omitzero"`
	// Warning says what would keep the skill from being chosen (a
	// description that only names it).
	Warning string `json:"warning,omitempty"`
	// Err says why the skill cannot be used (an unreadable SKILL.md).
	Err string `json:"error,omitempty"`
}

// Meta is a skill's .legate.json.
type Meta struct {
	Source      string    `json:"source"`
	Commit      string    `json:"commit,omitempty"`
	InstalledAt time.Time `json:"installed_at"`
	Enabled     bool      `json:"enabled"`
}

// Files of a skill directory the library manages.
const (
	SkillFile = "SKILL.md"
	MetaFile  = ".legate.json"
)

// DefaultDir is the skills folder of the state directory stateDir, where
// legate skills installs them; with stateDir "" (an instance built outside
// a command), that of $LEGATE_STATE_DIR, else of the default state
// directory ($XDG_STATE_HOME/legate, then ~/.local/state/legate).
func DefaultDir(stateDir string) string {
	if stateDir != "" {
		return filepath.Join(stateDir, "skills")
	}
	if d := os.Getenv("LEGATE_STATE_DIR"); d != "" {
		return filepath.Join(d, "skills")
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "legate", "skills")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "state", "legate", "skills")
}

// maxSkillBytes caps what one skill may bring on install.
const maxSkillBytes = 16 << 20

var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Library is the skills directory.
type Library struct {
	dir string
	// MaxCloneBytes bounds a repository's clone on disk (0:
	// DefaultMaxCloneBytes): a clone that grows past it is stopped.
	MaxCloneBytes int64
}

// DefaultMaxCloneBytes bounds a clone on disk: a skills repository is
// small, and a clone must not fill the disk.
const DefaultMaxCloneBytes = 64 << 20

// cloneTimeout bounds a clone's time.
const cloneTimeout = 5 * time.Minute

// Open returns the library kept in dir (which need not exist yet).
func Open(dir string) *Library { return &Library{dir: dir} }

// Dir is the library's directory.
func (l *Library) Dir() string { return l.dir }

// List returns the installed skills, sorted by name; a missing directory
// holds none.
func (l *Library) List() ([]Skill, error) {
	if l.dir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Skill
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, l.read(e.Name()))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Get returns one installed skill.
func (l *Library) Get(name string) (Skill, error) {
	if !skillName.MatchString(name) || len(name) > 64 {
		return Skill{}, legate.Errorf(legate.CodeInvalidArgument, "skills: %q is not a skill name", name)
	}
	if _, err := os.Stat(filepath.Join(l.dir, name, SkillFile)); err != nil {
		return Skill{}, legate.Errorf(legate.CodeNotFound, "skills: no skill %s installed", name)
	}
	return l.read(name), nil
}

func (l *Library) read(name string) Skill {
	s := Skill{Name: name}
	b, err := os.ReadFile(filepath.Join(l.dir, name, SkillFile))
	if err != nil {
		s.Err = "no readable " + SkillFile
		return s
	}
	fm, _, err := ParseSkill(b)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.Description, s.Tags, s.Version = fm.Description, fm.Tags, fm.Version
	if fm.Name != name {
		s.Warning = fmt.Sprintf("SKILL.md names it %q", fm.Name)
	}
	if w := DescriptionWarning(name, fm.Description); w != "" {
		s.Warning = w
	}
	if m, err := l.meta(name); err == nil {
		s.Enabled, s.Source, s.Commit, s.InstalledAt = m.Enabled, m.Source, m.Commit, m.InstalledAt
	}
	return s
}

func (l *Library) meta(name string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(l.dir, name, MetaFile))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

func writeMeta(dir string, m Meta) error {
	b, _ := json.MarshalIndent(m, "", "  ")
	tmp := filepath.Join(dir, MetaFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, MetaFile))
}

// FrontMatter is what SKILL.md says of its skill.
type FrontMatter struct {
	Name        string
	Description string
	Tags        []string
	Version     string
}

// ParseSkill splits SKILL.md into its front matter and its body. Keys
// other than name, description, tags and version are allowed and ignored.
func ParseSkill(b []byte) (FrontMatter, string, error) {
	var fm FrontMatter
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return fm, "", errors.New("SKILL.md does not start with YAML front matter (---)")
	}
	head, body, ok := strings.Cut(s[4:], "\n---")
	if !ok {
		return fm, "", errors.New("SKILL.md's front matter has no closing ---")
	}
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	var raw struct {
		Name        string    `yaml:"name"`
		Description string    `yaml:"description"`
		Tags        yaml.Node `yaml:"tags"`
		Version     yaml.Node `yaml:"version"`
	}
	if err := yaml.Unmarshal([]byte(head), &raw); err != nil {
		return fm, "", fmt.Errorf("SKILL.md front matter: %v", err)
	}
	fm.Name, fm.Description, fm.Version = strings.TrimSpace(raw.Name), strings.TrimSpace(raw.Description), raw.Version.Value
	switch raw.Tags.Kind {
	case yaml.SequenceNode:
		for _, t := range raw.Tags.Content {
			fm.Tags = append(fm.Tags, t.Value)
		}
	case yaml.ScalarNode:
		for _, t := range strings.Split(raw.Tags.Value, ",") {
			if t = strings.TrimSpace(t); t != "" {
				fm.Tags = append(fm.Tags, t)
			}
		}
	}
	switch {
	case !skillName.MatchString(fm.Name) || len(fm.Name) > 64:
		return fm, "", fmt.Errorf("SKILL.md name %q: use lower-case letters, digits and single hyphens, at most 64", fm.Name)
	case fm.Description == "":
		return fm, "", errors.New("SKILL.md has no description")
	}
	return fm, body, nil
}

// DescriptionWarning says why a description will not get its skill
// chosen: one that only names the skill gives a model nothing to decide
// by. It is "" for a description that says when to use the skill.
func DescriptionWarning(name, desc string) string {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		})
	}
	filler := map[string]bool{"skill": true, "the": true, "a": true, "an": true, "for": true, "procedure": true, "this": true, "is": true}
	nameWords := map[string]bool{}
	for _, w := range words(name) {
		nameWords[w] = true
	}
	for _, w := range words(desc) {
		if !nameWords[w] && !filler[w] {
			return ""
		}
	}
	return "the description only names the skill: say when to use it, or it will not be chosen"
}

// Revision fingerprints what the tools and instructions depend on: which
// skills are installed, enabled, and what their SKILL.md says.
func (l *Library) Revision() string {
	h := sha256.New()
	skills, _ := l.List()
	for _, s := range skills {
		if s.Enabled {
			fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\n", s.Name, s.Description, s.Err, s.Warning)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// SetEnabled enables or disables an installed skill.
func (l *Library) SetEnabled(name string, on bool) error {
	s, err := l.Get(name)
	if err != nil {
		return err
	}
	if on && s.Err != "" {
		return legate.Errorf(legate.CodeInvalidArgument, "skills: %s cannot be enabled: %s", name, s.Err)
	}
	m, err := l.meta(name)
	if err != nil {
		m = Meta{Source: "unknown", InstalledAt: time.Now().UTC()}
	}
	m.Enabled = on
	return writeMeta(filepath.Join(l.dir, name), m)
}

// Remove deletes an installed skill.
func (l *Library) Remove(name string) error {
	if _, err := l.Get(name); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(l.dir, name))
}

// Install installs the skills of src: a directory holding SKILL.md, or a
// git repository (a URL, or a local directory holding .git) whose root
// or whose directories one or two levels down hold SKILL.md. Everything
// arrives disabled: it is text nobody here has read yet, about to become
// a standing instruction. A skill already installed is not replaced.
func (l *Library) Install(ctx context.Context, src string) ([]Skill, error) {
	if src == "" || strings.HasPrefix(src, "-") {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "skills: %q is not a path or repository URL", src)
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	meta := Meta{Source: src, InstalledAt: time.Now().UTC()}
	from := src
	st, err := os.Stat(src)
	local := err == nil && st.IsDir()
	if local {
		abs, _ := filepath.Abs(src)
		meta.Source = abs
	}
	if _, err := os.Stat(filepath.Join(src, ".git")); !local || err == nil {
		tmp, err := os.MkdirTemp(l.dir, ".clone-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if meta.Commit, err = clone(ctx, src, tmp, cmp.Or(l.MaxCloneBytes, DefaultMaxCloneBytes)); err != nil {
			return nil, err
		}
		from = tmp
		if !local {
			meta.Source = RedactURL(src)
		}
	}
	dirs, err := findSkills(from)
	if err != nil {
		return nil, err
	}
	var out []Skill
	for _, d := range dirs {
		s, err := l.installDir(d, meta)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// clone clones src into dir with the git binary and returns the commit.
// The clone is stopped once dir holds more than max bytes, or after
// cloneTimeout.
func clone(ctx context.Context, src, dir string, max int64) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cloneTimeout)
	defer cancel()
	var tooBig atomic.Bool
	go func() { // watches the clone grow
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if dirSize(dir) > max {
					tooBig.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil && tooBig.Load() {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "skills: the repository is larger than %d bytes on disk; a skills repository is small", max)
		}
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if len(msg) > 500 {
				msg = strings.ToValidUTF8(msg[:500], "") + "…"
			}
			return nil, legate.Errorf(legate.CodeNotFound, "skills: git %s: %v: %s", args[0], err, msg)
		}
		return out, nil
	}
	if _, err := git("clone", "--quiet", "--depth", "1", "--no-recurse-submodules", "--", src, dir); err != nil {
		return "", err
	}
	if dirSize(dir) > max { // a clone done before the watcher's first look
		return "", legate.Errorf(legate.CodeInvalidArgument, "skills: the repository is larger than %d bytes on disk; a skills repository is small", max)
	}
	out, err := git("-C", dir, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// RedactURL drops the user info of a repository URL (a token in it), as
// the library records a source and an audit row names one.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// findSkills lists the directories of tree that hold SKILL.md: the root,
// else those one or two levels down.
func findSkills(tree string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(tree, SkillFile)); err == nil {
		return []string{tree}, nil
	}
	var out []string
	for _, pat := range []string{"*/" + SkillFile, "*/*/" + SkillFile} {
		m, _ := filepath.Glob(filepath.Join(tree, pat))
		for _, f := range m {
			if !strings.Contains(f, string(filepath.Separator)+".git"+string(filepath.Separator)) {
				out = append(out, filepath.Dir(f))
			}
		}
	}
	if len(out) == 0 {
		return nil, legate.Errorf(legate.CodeNotFound, "skills: no %s found at the root or one or two levels down", SkillFile)
	}
	return out, nil
}

// installDir copies one skill directory into the library, disabled.
func (l *Library) installDir(src string, meta Meta) (Skill, error) {
	b, err := os.ReadFile(filepath.Join(src, SkillFile))
	if err != nil {
		return Skill{}, err
	}
	fm, _, err := ParseSkill(b)
	if err != nil {
		return Skill{}, legate.Errorf(legate.CodeInvalidArgument, "skills: %s: %v", src, err)
	}
	dest := filepath.Join(l.dir, fm.Name)
	if _, err := os.Lstat(dest); err == nil {
		return Skill{}, legate.Errorf(legate.CodeConflict, "skills: %s is already installed; remove it first", fm.Name)
	}
	tmp, err := os.MkdirTemp(l.dir, ".install-")
	if err != nil {
		return Skill{}, err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(src, tmp); err != nil {
		return Skill{}, err
	}
	meta.Enabled = false
	if err := writeMeta(tmp, meta); err != nil {
		return Skill{}, err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return Skill{}, err
	}
	return l.read(fm.Name), nil
}

// copyTree copies the regular files and directories of src into dst,
// leaving out .git, the library's own file, and symlinks (which could
// point anywhere), within maxSkillBytes.
func copyTree(src, dst string) error {
	total := int64(0)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		switch {
		case rel == ".":
			return nil
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return os.Mkdir(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular() || rel == MetaFile:
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > maxSkillBytes {
			return legate.Errorf(legate.CodeInvalidArgument, "skills: %s is larger than %d bytes", src, maxSkillBytes)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, info.Mode().Perm()&0o755)
	})
}

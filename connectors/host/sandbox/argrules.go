package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/legate-mcp/legate"
)

// argRules are the options of one program that sh_exec refuses under a
// shell allowlist: those that make it run another program named in its
// arguments or its configuration, write a file its arguments name, or
// work on a tree other than the workspace. They are a second line behind
// the kernel's confinement, and the only line where the kernel has none;
// they cannot make an interpreter safe (make runs whatever its Makefile
// says, git whatever a hook or .git/config says), which is why the README
// counts allowing such a program as allowing arbitrary code.
type argRules struct {
	// short: the program takes clustered one-letter options (-xvf), so a
	// refused one-letter option is looked for inside every cluster.
	short bool
	// refuse are options refused outright, as a word, as --name=value,
	// and (short) inside a cluster.
	refuse []string
	// local are options whose value (the next word, after "=", or
	// attached to a one-letter option) must be a relative path that stays
	// inside the directory the command runs in.
	local []string
	// under are options refused when a word of the command names the
	// subcommand given as key (git clone -u names the upload-pack program;
	// git add -u does not).
	under map[string][]string
}

// refusedArgs is the table of argument rules, by program name.
var refusedArgs = map[string]argRules{
	"git": {
		short: true,
		refuse: []string{"-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--exec",
			"-x", "--extcmd", "--tool", "-O", "--open-files-in-pager", "--ext-diff", "--textconv"},
		local: []string{"-C", "--git-dir", "--work-tree"},
		under: map[string][]string{"clone": {"-u"}, "fetch": {"-u"}, "ls-remote": {"-u"}, "archive": {"--remote"}},
	},
	"find": {
		refuse: []string{"-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls", "-delete"},
	},
	"make": {
		short:  true,
		refuse: []string{"-E", "--eval"},
		local:  []string{"-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir"},
	},
	"tar": {
		short: true,
		refuse: []string{"--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script",
			"--new-volume-script", "-F", "--rsh-command", "--rmt-command"},
		local: []string{"-C", "--directory"},
	},
	"rsync": {
		short:  true,
		refuse: []string{"-e", "--rsh", "--rsync-path"},
	},
}

// CheckArgs refuses args of prog that its rules refuse; when confined is
// false (the kernel offers no confinement) it also refuses every argument
// naming a path outside the workspace: absolute, starting with ~, or
// climbing out with "..".
func CheckArgs(prog string, args []string, confined bool, inside func(abs string) bool) error {
	rules := refusedArgs[prog]
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	refuse := slices.Clone(rules.refuse)
	for sub, opts := range rules.under {
		if slices.Contains(words, sub) {
			refuse = append(refuse, opts...)
		}
	}
	deny := func(why string, a ...any) error {
		return legate.Errorf(legate.CodePermissionDenied, "host: "+prog+": "+why, a...)
	}
	for i, a := range args {
		for _, opt := range refuse {
			if matchOption(a, opt, rules.short) {
				return deny("option %s is refused: it runs a program, writes a file or reads configuration its value names", opt)
			}
		}
		for _, opt := range rules.local {
			v, ok := optionValue(args, i, opt, rules.short)
			if ok && !localPath(v) {
				return deny("option %s must name a relative path inside the workspace, got %q", opt, v)
			}
		}
		if !confined {
			v := a
			if _, after, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
				v = after
			}
			if outsidePath(v, inside) {
				return deny("%q names a path outside the workspace, refused while sh_exec runs without kernel confinement", v)
			}
		}
	}
	return nil
}

// matchOption reports whether argument a is option opt: the word itself,
// --opt=value, -Xvalue for a one-letter option, or, for a program taking
// clustered short options, a cluster holding the letter.
func matchOption(a, opt string, short bool) bool {
	if a == opt || strings.HasPrefix(a, opt+"=") {
		return true
	}
	if len(opt) != 2 || opt[0] != '-' || opt[1] == '-' {
		return false
	}
	if strings.HasPrefix(a, opt) {
		return true // attached value: -ccore.fsmonitor=…, -fevil.mk
	}
	return short && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], opt[1]) >= 0
}

// optionValue is the value given to option opt at args[i], if args[i] is
// that option.
func optionValue(args []string, i int, opt string, short bool) (string, bool) {
	a := args[i]
	switch {
	case a == opt:
		if i+1 < len(args) {
			return args[i+1], true
		}
		return "", false
	case strings.HasPrefix(a, opt+"="):
		return a[len(opt)+1:], true
	case len(opt) == 2 && opt[1] != '-' && strings.HasPrefix(a, opt):
		return a[2:], true
	case short && len(opt) == 2 && opt[1] != '-' && len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], opt[1]) >= 0:
		return "/", true // inside a cluster (-sf x): its value cannot be told apart, refused
	}
	return "", false
}

// localPath reports whether p is a relative path that stays beneath the
// directory it is relative to.
func localPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "~") && filepath.IsLocal(p)
}

// outsidePath reports whether argument v reads as a path leaving the
// workspace: absolute and not inside it, under ~, or climbing with "..".
func outsidePath(v string, inside func(abs string) bool) bool {
	switch {
	case v == "":
		return false
	case strings.HasPrefix(v, "~"):
		return true
	case filepath.IsAbs(v):
		return !inside(filepath.Clean(v))
	}
	return slices.Contains(strings.Split(filepath.ToSlash(v), "/"), "..")
}

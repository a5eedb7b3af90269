// Package statedir finds a Legate's configuration file and state
// directory, the one way every command and every connector default does:
//
// The configuration file: --config, then $LEGATE_CONFIG, then
// ./config.yaml when it exists, else none.
//
// The state directory: --state-dir, then $LEGATE_STATE_DIR, then the
// configuration's state_dir (relative to the configuration file), then
// $XDG_STATE_HOME/legate, then ~/.local/state/legate.
//
// A directory found by the last two rules is the default one: a command
// that has nothing more specific to go by follows a running server
// instead (see package local).
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Env names the variables the order reads.
const (
	ConfigEnv = "LEGATE_CONFIG"
	DirEnv    = "LEGATE_STATE_DIR"
)

// Place is where a command's configuration and state are, and why.
type Place struct {
	// Config is the configuration file, "" for none (the defaults).
	Config string
	// ConfigBy says which rule chose Config: "--config", "$LEGATE_CONFIG",
	// "./config.yaml" or "" for none.
	ConfigBy string
	// Dir is the state directory, absolute.
	Dir string
	// DirBy says which rule chose Dir: "--state-dir", "$LEGATE_STATE_DIR",
	// "state_dir in <file>" or "the default".
	DirBy string
}

// Default reports whether Dir is the default directory, chosen by no flag,
// variable or configuration.
func (p Place) Default() bool { return p.DirBy == byDefault }

const byDefault = "the default"

// ConfigFile picks the configuration file: flag, then $LEGATE_CONFIG,
// then ./config.yaml when it exists; "" when none applies.
func ConfigFile(flag string, getenv func(string) string) (path, by string) {
	switch {
	case flag != "":
		return flag, "--config"
	case getenv(ConfigEnv) != "":
		return getenv(ConfigEnv), "$" + ConfigEnv
	}
	if _, err := os.Stat("config.yaml"); err == nil {
		return "config.yaml", "./config.yaml"
	}
	return "", ""
}

// Dir picks the state directory: flag, then $LEGATE_STATE_DIR, then
// stateDir (the configuration's state_dir) relative to the configuration
// file configPath, then the default. The directory is made absolute, so
// that a server and a command run from another folder name it alike.
func Dir(flag string, getenv func(string) string, stateDir, configPath string) (dir, by string, err error) {
	switch {
	case flag != "":
		dir, by = flag, "--state-dir"
	case getenv(DirEnv) != "":
		dir, by = getenv(DirEnv), "$"+DirEnv
	case stateDir != "":
		dir, by = stateDir, "state_dir in "+configPath
		if !filepath.IsAbs(stateDir) && configPath != "" {
			dir = filepath.Join(filepath.Dir(configPath), stateDir)
		}
	default:
		if dir, err = DefaultDir(getenv); err != nil {
			return "", "", err
		}
		by = byDefault
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("state directory %s: %w", dir, err)
	}
	return abs, by, nil
}

// DefaultDir is $XDG_STATE_HOME/legate, else ~/.local/state/legate.
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "legate"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.Join(errors.New("no state directory: set --state-dir or "+DirEnv), err)
	}
	return filepath.Join(home, ".local", "state", "legate"), nil
}

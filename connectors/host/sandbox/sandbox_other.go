//go:build !linux

package sandbox

import (
	"context"
	"os/exec"
)

// Command runs the command directly: without Landlock there is no
// trampoline, and the rlimits are not applied.
func Command(ctx context.Context, spec *Spec) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, spec.Path, spec.Args[1:]...)
	cmd.Args[0] = spec.Args[0]
	return cmd, nil
}

// landlockABI is 0: Landlock is Linux's.
func landlockABI() (int, string) { return 0, "Landlock is a Linux facility" }

//go:build !linux

package host

import (
	"context"
	"os/exec"
)

// sandboxCommand runs the command directly: without Landlock there is no
// trampoline, and the rlimits are not applied.
func sandboxCommand(ctx context.Context, spec *sandboxSpec) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, spec.Path, spec.Args[1:]...)
	cmd.Args[0] = spec.Args[0]
	return cmd, nil
}

// landlockABI is 0: Landlock is Linux's.
func landlockABI() (int, string) { return 0, "Landlock is a Linux facility" }

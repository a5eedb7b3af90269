package e2e_test

import (
	"os/exec"
	"syscall"
)

// syscallKillGroup ends cmd, started in a process group of its own, and everything it started.
func syscallKillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

//go:build unix

package host

import (
	"os/exec"
	"syscall"
)

// isolate puts the plugin in a process group of its own, so that killing it
// also kills any process it started, and so that a terminal's Ctrl-C reaches
// only the server, which then shuts its plugins down itself.
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup sends SIGKILL to the plugin's process group (its pid, as
// isolate made it a group leader). Call it only while the plugin has not
// been reaped, so the group id cannot belong to a new process.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

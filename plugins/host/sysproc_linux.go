//go:build linux

package host

import "syscall"

// setDeathSignal makes the kernel kill the plugin when the server dies, even
// by SIGKILL, so no plugin outlives the server. (Linux delivers it when the
// thread that started the plugin exits; the Go runtime keeps its threads
// alive unless a goroutine exits while locked to one, which this package
// never does.)
func setDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}

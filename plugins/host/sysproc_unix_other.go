//go:build unix && !linux

package host

import "syscall"

// setDeathSignal does nothing: only Linux has a parent-death signal.
// Host.Shutdown still kills every plugin on an orderly server shutdown.
func setDeathSignal(*syscall.SysProcAttr) {}

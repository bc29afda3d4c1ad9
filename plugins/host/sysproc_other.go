//go:build !unix

package host

import "os/exec"

// isolate does nothing outside Unix: go-plugin's Kill ends the plugin.
func isolate(*exec.Cmd) {}

// killGroup does nothing outside Unix.
func killGroup(int) {}

//go:build unix

package atomicfile

import "syscall"

// processAlive says whether a process with this pid exists (signal 0
// probes without sending anything).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

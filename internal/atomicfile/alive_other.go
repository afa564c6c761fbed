//go:build !unix

package atomicfile

// processAlive cannot probe other processes here: every other process's
// temporaries are kept.
func processAlive(int) bool { return true }

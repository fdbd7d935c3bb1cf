package framework

import "os"

// ScratchDir makes a new directory (os.MkdirTemp's pattern) for what a target's process writes
// while the harness times it, a client's {{.State}}: in memory when the machine has a writable
// tmpfs at /dev/shm (memoryScratch), else in the OS temp dir. A file renamed into place there
// survives the SIGKILLs of the restart specs as on a disk, and a durable save's fsync cannot
// stall behind a busy disk: on a CI runner compiling beside the self-test the reference client's
// fsync took 350 ms, and its retry, due 71 ms after a 503, came 423 ms after it, which the
// backoff judgement (rightly) calls late.
func ScratchDir(pattern string) (string, error) {
	if root := memoryScratch(); root != "" {
		if dir, err := os.MkdirTemp(root, pattern); err == nil {
			return dir, nil
		}
	}
	return os.MkdirTemp("", pattern)
}

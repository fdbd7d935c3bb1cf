package frameworktest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvBinary names a built retrysafe binary that the tests start (CI builds one for every stage);
// when it is not set, Binary builds one.
const EnvBinary = "RETRYSAFE_BIN"

// Binary returns a retrysafe binary of the test's own, at a path of its own (a process check by
// path then sees only the test's processes): a copy of $RETRYSAFE_BIN when set, else one built
// from this tree.
func Binary(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "retrysafe")
	if src := os.Getenv(EnvBinary); src != "" {
		// A hard link, not a copy: a file this process has open for writing while another
		// goroutine forks a child cannot be executed until the child execs ("text file busy").
		if err := os.Link(src, dst); err == nil {
			return dst
		}
		if err := copyFile(src, dst); err != nil {
			t.Fatalf("copy $%s: %v", EnvBinary, err)
		}
		return dst
	}
	if out, err := exec.Command("go", "build", "-o", dst, "github.com/retrysafe/retrysafe/cmd/retrysafe").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/retrysafe: %v\n%s", err, out)
	}
	return dst
}

// copyFile copies an executable.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

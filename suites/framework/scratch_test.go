package framework

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestScratchDir(t *testing.T) {
	dir, err := ScratchDir("retrysafe-scratch-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if !strings.HasPrefix(filepath.Base(dir), "retrysafe-scratch-test-") {
		t.Errorf("ScratchDir = %s, want a directory named from the pattern", dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatalf("the scratch directory is not writable: %v", err)
	}
	want := os.TempDir()
	if root := memoryScratch(); root != "" {
		want = root
	} else if runtime.GOOS == "linux" {
		t.Logf("/dev/shm is not a tmpfs here: scratch goes to %s", want)
	}
	if filepath.Dir(dir) != filepath.Clean(want) {
		t.Errorf("ScratchDir = %s, want it under %s", dir, want)
	}
}

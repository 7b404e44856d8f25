//go:build unix

package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A symlink planted where the file or its lock goes makes Append fail: no
// file is created, read or copied outside the directory.
func TestSymlinksRefused(t *testing.T) {
	t.Parallel()
	for _, planted := range []string{".yaml", ".yaml.lock"} {
		dir, outside := t.TempDir(), t.TempDir()
		target := filepath.Join(outside, "target")
		secret := []byte("session_id: s\ninvocations: []\nsecret: outside\n")
		if planted == ".yaml" {
			if err := os.WriteFile(target, secret, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(target, filepath.Join(dir, "s"+planted)); err != nil {
			t.Fatal(err)
		}
		err := Append(context.Background(), dir, "s", Invocation{Timestamp: time.Now()})
		if err == nil {
			t.Errorf("%s: append through a symlink succeeded", planted)
		}
		if planted == ".yaml.lock" {
			if _, err := os.Lstat(target); !os.IsNotExist(err) {
				t.Errorf("%s: a file was created outside the directory", planted)
			}
		} else {
			if b, _ := os.ReadFile(target); string(b) != string(secret) {
				t.Errorf("%s: the outside file changed", planted)
			}
			if _, err := Read(dir, "s"); err == nil {
				t.Errorf("%s: Read followed the symlink", planted)
			}
		}
	}
}

// New files are private; a directory anyone may write to without the sticky
// bit is refused; one with it (like /tmp) is accepted.
func TestPermissions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new")
	if err := Append(context.Background(), dir, "s", Invocation{Timestamp: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, Path(dir, "s"), Path(dir, "s") + ".lock"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v, want no access for group or others", p, st.Mode().Perm())
		}
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Append(context.Background(), open, "s", Invocation{}); err == nil {
		t.Error("a world-writable directory without the sticky bit was accepted")
	}
	if err := os.Chmod(open, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := Append(context.Background(), open, "s", Invocation{}); err != nil {
		t.Errorf("a sticky world-writable directory: %v", err)
	}
}

// With another holder of the session's lock, Append gives up waiting when
// its context ends, and the invocation is set aside, not lost: Read shows
// it, and the next Append takes it into the file.
func TestLockWaitBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Append(context.Background(), dir, "s", Invocation{}); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockPath(context.Background(), Path(dir, "s")+".lock")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := Append(ctx, dir, "s", Invocation{Prompt: "set aside"}); err != nil {
		t.Fatalf("err = %v, want the invocation set aside", err)
	}
	// Generous: the bound is the context (200 ms), not the holder (forever).
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("waited %v", d)
	}
	f, err := Read(dir, "s")
	if err != nil || len(f.Invocations) != 2 || f.Invocations[1]["prompt"] != "set aside" {
		t.Fatalf("read while set aside: %+v %v", f, err)
	}
	unlock()
	if err := Append(context.Background(), dir, "s", Invocation{Prompt: "next"}); err != nil {
		t.Fatal(err)
	}
	f, err = Read(dir, "s")
	if err != nil || len(f.Invocations) != 3 || f.Invocations[1]["prompt"] != "set aside" || f.Invocations[2]["prompt"] != "next" {
		t.Fatalf("after the next append: %+v %v", f, err)
	}
	if left := pendingFiles(Path(dir, "s")); len(left) != 0 {
		t.Fatalf("set-aside files left: %v", left)
	}
}

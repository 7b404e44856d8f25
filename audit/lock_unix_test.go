//go:build unix

package audit

import (
	"context"
	"os"
	"os/exec"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as the other process of TestLockWaitersLeakNothing: run
// with AUDIT_HOLD_LOCK set, it holds the flock on that path until its stdin
// closes, and runs no test.
func TestMain(m *testing.M) {
	if path := os.Getenv("AUDIT_HOLD_LOCK"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			os.Exit(2)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("locked\n")
		_, _ = os.Stdin.Read(make([]byte, 1))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1 // not Linux: descriptors are not counted
	}
	return len(es)
}

// H1 of issue 26: with another process holding a dump's lock, waiters that
// give up leave nothing behind. 64 waiters × 20 rounds, each waiting 20 ms:
// the threads the process ever created and its open descriptors stay flat
// (before the fix each abandoned wait kept a thread blocked in flock and a
// descriptor; now at most one waits per file: 9,606 threads after 150 s, then the runtime's thread limit).
func TestLockWaitersLeakNothing(t *testing.T) {
	dir := t.TempDir()
	lock := Path(dir, "s") + ".lock"
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), "AUDIT_HOLD_LOCK="+lock)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = holder.Wait() }()
	if _, err := stdout.Read(make([]byte, 7)); err != nil {
		t.Fatalf("the holder never locked: %v", err)
	}

	threads := pprof.Lookup("threadcreate")
	t0, fd0 := threads.Count(), openFDs(t)
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer cancel()
				if err := Append(ctx, dir, "s", Invocation{}); err != nil { // set aside
					t.Errorf("err = %v, want the invocation set aside", err)
				}
			}()
		}
		wg.Wait()
	}
	// A few threads for the runtime's own needs; not one per waiter (1,280).
	if grown := threads.Count() - t0; grown > 16 {
		t.Errorf("%d threads created by 1,280 abandoned waits", grown)
	}
	if fd := openFDs(t); fd0 >= 0 && fd > fd0+2 {
		t.Errorf("open descriptors %d -> %d", fd0, fd)
	}
	// The holder lets go: the next Append gets the lock and takes in every
	// invocation set aside meanwhile (SPEC §6: none lost).
	_ = stdin.Close()
	_ = holder.Wait()
	if err := Append(context.Background(), dir, "s", Invocation{}); err != nil {
		t.Fatal(err)
	}
	if f, err := Read(dir, "s"); err != nil || len(f.Invocations) != 20*64+1 {
		t.Errorf("%v invocations in the file, want %d: %v", len(f.Invocations), 20*64+1, err)
	}
	if left := pendingFiles(Path(dir, "s")); len(left) != 0 {
		t.Errorf("%d set-aside files left", len(left))
	}
	mutexesMu.Lock()
	left := len(mutexes)
	mutexesMu.Unlock()
	if left != 0 {
		t.Errorf("%d lock entries left in the process", left)
	}
}

package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// procStat reads this process as the kernel reports it: its parent, its
// name, and CPU that grows while it computes.
func TestProcStat(t *testing.T) {
	before, ok := procStat(os.Getpid())
	if !ok {
		t.Skip("no /proc here")
	}
	if before.ppid != os.Getppid() {
		t.Errorf("ppid %d, want %d", before.ppid, os.Getppid())
	}
	if name := filepath.Base(os.Args[0]); len(name) > 15 && before.comm != name[:15] || len(name) <= 15 && before.comm != name {
		t.Errorf("comm %q, want %q", before.comm, name)
	}
	// Work until the kernel counts a tick of it (10 ms of CPU), however
	// busy the machine; 5 s of wall time without one is a misread.
	after, x := before, 0
	for start := time.Now(); after.self <= before.self && time.Since(start) < 5*time.Second; {
		for range 1 << 20 {
			x++
		}
		after, _ = procStat(os.Getpid())
	}
	if after.self <= before.self {
		t.Errorf("CPU %v after 5 s of work, %v before (%d)", after.self, before.self, x)
	}
	if _, ok := procStat(-1); ok {
		t.Error("a process that cannot exist was read")
	}
}

//go:build unix

package cli

import "syscall"

// descriptorBudget is how many connections serve may hold open: the
// process's descriptor limit less a reserve for the database pool, audit
// files and the listener, so accepting can never fail for want of one.
func descriptorBudget() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 1 << 30
	}
	return max(int(r.Cur)-256, 16)
}

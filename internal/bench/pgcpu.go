package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's unit of process CPU time in /proc (USER_HZ,
// 100 on every Linux the benchmark runs on).
const clockTick = 10 * time.Millisecond

// ServerCPU is the CPU time the PostgreSQL server has used so far: its
// postmaster, every process it started (backends, WAL writer,
// checkpointer, autovacuum) and those of them that ended (the postmaster's
// reaped children), read from /proc. ok is false where the server is not a
// process of this machine (or PostgreSQL only through a pooler): the
// benchmark's own connection's backend is how the server is found.
// Differences over a run divided by the turns stored are PostgreSQL's CPU
// per turn (issue 57: 0.544 ms a remstore turn, all of it counted, commit
// and the WAL included, which pg_stat_statements leaves out).
func (e *Env) ServerCPU(ctx context.Context) (time.Duration, bool) {
	if e.Conn == nil {
		return 0, false
	}
	var backend int
	if err := e.Conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, false
	}
	f, ok := procStat(backend)
	if !ok || f.comm != "postgres" {
		return 0, false
	}
	postmaster, ok := procStat(f.ppid)
	if !ok || postmaster.comm != "postgres" {
		return 0, false
	}
	total := postmaster.self + postmaster.children
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if s, ok := procStat(pid); ok && s.ppid == f.ppid {
			total += s.self
		}
	}
	return total, true
}

// stat is what ServerCPU reads of a process.
type stat struct {
	comm           string
	ppid           int
	self, children time.Duration // utime+stime, cutime+cstime
}

// procStat reads /proc/pid/stat: "pid (comm) state ppid ... utime stime
// cutime cstime ..." (fields 4, 14-17; comm may hold spaces, so the fields
// are counted from its closing parenthesis).
func procStat(pid int) (stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3 (state)
	if len(f) < 15 {
		return stat{}, false
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
	return stat{comm: s[open+1 : end], ppid: int(n(4)),
		self:     time.Duration(n(14)+n(15)) * clockTick,
		children: time.Duration(n(16)+n(17)) * clockTick}, true
}

// serverCPUPerTurn is the server's CPU since cpu0 over turns, in ms (0:
// not known).
func (e *Env) serverCPUPerTurn(ctx context.Context, cpu0 time.Duration, known bool, turns int) float64 {
	cpu, ok := e.ServerCPU(ctx)
	if !known || !ok || turns == 0 {
		return 0
	}
	return float64(cpu-cpu0) / float64(time.Millisecond) / float64(turns)
}

package faulttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Cluster is a throwaway PostgreSQL server on a unix socket.
type Cluster struct {
	bin, dir, sock string
	asPostgres     bool
}

// New initializes a cluster with the server binaries of REMSTORE_TEST_PG_BIN
// (set by scripts/test.sh); the test is skipped, or failed under
// REMSTORE_REQUIRE_PG=1, when they are unknown.
func New(t *testing.T) *Cluster {
	t.Helper()
	bin := os.Getenv("REMSTORE_TEST_PG_BIN")
	if bin == "" {
		if os.Getenv("REMSTORE_REQUIRE_PG") == "1" {
			t.Fatal("REMSTORE_TEST_PG_BIN is not set: run the tests with make test")
		}
		t.Skip("REMSTORE_TEST_PG_BIN not set: no server binaries to crash")
	}
	dir, err := os.MkdirTemp("", "remstore-fault-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{bin: bin, dir: dir, sock: filepath.Join(dir, "sock"), asPostgres: os.Geteuid() == 0}
	t.Cleanup(func() {
		_ = c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
		_ = os.RemoveAll(dir)
	})
	_ = os.MkdirAll(c.sock, 0o755)
	if c.asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		_ = os.Chmod(dir, 0o755)
		for _, p := range []string{dir, c.sock} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8"); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// URL connects to the cluster's postgres database.
func (c *Cluster) URL() string {
	return "postgres://postgres@/postgres?host=" + c.sock + "&sslmode=disable&connect_timeout=5"
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() error {
	return c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-c listen_addresses='' -k %s -c fsync=on", c.sock), "start")
}

// Crash stops the server the hard way: no checkpoint, in-flight work lost,
// crash recovery on the next start.
func (c *Cluster) Crash() error {
	return c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
}

func (c *Cluster) run(name string, args ...string) error {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

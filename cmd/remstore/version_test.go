package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/version"
)

// A build from a checkout says <release>-devel+<commit>[.dirty] whether Go
// stamps it (-buildvcs=true) or not (GOFLAGS=-buildvcs=false, as on CI, with
// the commit linked in by scripts/ldflags.sh as the Makefile and scripts
// do); the commit and the dirty mark are decided here by git itself. The
// unstamped build records no commit of its own (what a plain
// `go build -buildvcs=false` would print is then <release>-devel, see
// internal/version's cases). /healthz, MCP initialize and /openapi.json say
// what --version says.
//
// Go stamps only a tree whose .git is a folder, not a `git worktree` (a
// .git file): the stamped build is made in a copy of this tree, the same
// files over a clone of the same commit.
func TestCheckoutBuildNamesItsCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout:", err)
	}
	want := version.Release + "-devel+" + strings.TrimSpace(string(head))[:12]
	if status, err := exec.Command("git", "status", "--porcelain").Output(); err != nil {
		t.Fatal(err)
	} else if len(status) > 0 {
		want += ".dirty"
	}
	dir := t.TempDir()
	stamped, linked := filepath.Join(dir, "stamped"), filepath.Join(dir, "linked")
	build := func(out string, goflags string, args ...string) string {
		cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", out, ".")...)
		cmd.Env = append(os.Environ(), "GOFLAGS="+goflags)
		if out == stamped {
			cmd.Dir = filepath.Join(copyCheckout(t), "cmd", "remstore")
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, b)
		}
		info, err := exec.Command("go", "version", "-m", out).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(info)
	}
	if info := build(stamped, "", "-buildvcs=true"); !strings.Contains(info, "vcs.revision=") {
		t.Fatalf("-buildvcs=true recorded no commit:\n%s", info)
	}
	ldflags, err := exec.Command("../../scripts/ldflags.sh").Output()
	if err != nil {
		t.Fatal(err)
	}
	info := build(linked, "-buildvcs=false", "-ldflags", strings.TrimSpace(string(ldflags)))
	if strings.Contains(info, "vcs.") || !strings.Contains(info, "\tmod\tgithub.com/remstore/remstore\t(devel)") {
		t.Fatalf("GOFLAGS=-buildvcs=false: want no VCS stamp and the version (devel), got\n%s", info)
	}
	for _, bin := range []string{stamped, linked} {
		out, err := exec.Command(bin, "--version").Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != "remstore version "+want {
			t.Errorf("%s --version: %q (%v), want %q", filepath.Base(bin), got, err, "remstore version "+want)
		}
	}
	for surface, got := range servedVersions(t, linked) {
		if got != want {
			t.Errorf("%s says %q, --version %q", surface, got, want)
		}
	}
}

// copyCheckout is a checkout with .git a folder holding the same files as
// this one (tracked, edited and untracked), so git calls it as dirty as this.
func copyCheckout(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "checkout")
	script := `set -e
top=$(git rev-parse --show-toplevel)
git clone -q --shared --no-checkout "$top" "$1"
git -C "$1" reset -q
cd "$top" && git ls-files -z -co --exclude-standard | xargs -0 tar --ignore-failed-read -cf - | tar -C "$1" -xf -`
	if out, err := exec.Command("bash", "-c", script, "copy", dir).CombinedOutput(); err != nil {
		t.Fatalf("copying the checkout: %v\n%s", err, out)
	}
	return dir
}

// servedVersions is the version each surface of a running build reports.
func servedVersions(t *testing.T, bin string) map[string]string {
	db := filepath.Join(t.TempDir(), "v.db")
	if out, err := exec.Command(bin, "migrate", "up", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	got := map[string]string{}
	cmd, addr := startServe(t, bin, db, strings.Repeat("k", 32))
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	getJSON := func(path string, v any) {
		resp, err := http.Get(addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var health struct{ Version string }
	getJSON("/healthz", &health)
	got["/healthz"] = health.Version
	var doc struct{ Info struct{ Version string } }
	getJSON("/openapi.json", &doc)
	got["/openapi.json info.version"] = doc.Info.Version

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mcp := exec.CommandContext(ctx, bin, "mcp", "--user-id", "t", "--db", db)
	mcp.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	out, err := mcp.Output()
	if err != nil {
		t.Fatalf("mcp: %v\n%s", err, out)
	}
	var init struct {
		Result struct{ ServerInfo struct{ Version string } }
	}
	if err := json.Unmarshal([]byte(strings.SplitN(string(out), "\n", 2)[0]), &init); err != nil {
		t.Fatalf("mcp initialize: %v\n%s", err, out)
	}
	got["MCP initialize serverInfo.version"] = init.Result.ServerInfo.Version
	return got
}

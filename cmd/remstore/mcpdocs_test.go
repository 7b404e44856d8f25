package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Each client configuration in docs/mcp.md starts a working server: its
// command (remstore, built here) with its args and env is sent initialize and
// tools/list, and must list both tools.
func TestMCPClientConfigs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) != 3 {
		t.Fatalf("%d json blocks in docs/mcp.md, want 3 (Claude Desktop, Cursor, VS Code)", len(blocks))
	}
	bin := filepath.Join(t.TempDir(), "remstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	home := t.TempDir()
	db := filepath.Join(home, "mcp.db")
	if out, err := exec.Command(bin, "migrate", "up", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	for i, b := range blocks {
		type server struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		}
		var cfg struct {
			MCPServers map[string]server `json:"mcpServers"` // Claude Desktop, Cursor
			Servers    map[string]server `json:"servers"`    // VS Code
		}
		dec := json.NewDecoder(strings.NewReader(string(b[1])))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			t.Fatalf("block %d: %v", i+1, err)
		}
		s, ok := cfg.MCPServers["remstore"]
		if !ok {
			s, ok = cfg.Servers["remstore"]
			if !ok || s.Type != "stdio" {
				t.Fatalf("block %d: no remstore server (VS Code needs type stdio): %s", i+1, b[1])
			}
		}
		if s.Command != "remstore" || len(s.Args) == 0 || s.Args[0] != "mcp" {
			t.Fatalf("block %d: command %q %v", i+1, s.Command, s.Args)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin)
		cmd.Args = append([]string{"remstore"}, s.Args...) // as the client runs it
		env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		for k, v := range s.Env {
			if k == "REMSTORE_DB" {
				v = db // the snippet's server is an example; the test's file stands in
			}
			env = append(env, k+"="+v)
		}
		if _, set := s.Env["REMSTORE_DB"]; !set {
			env = append(env, "REMSTORE_DB="+db)
		}
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("block %d: %v\n%s", i+1, err, out)
		}
		if !strings.Contains(string(out), `"name":"rem_lookup"`) || !strings.Contains(string(out), `"name":"session_history"`) {
			t.Errorf("block %d: tools/list did not list both tools:\n%s", i+1, out)
		}
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository"
)

// startServe runs the binary's serve on a free loopback port, with extra
// flags, and returns its base URL.
func startServe(t *testing.T, bin, db, apiKey string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, flags...)...)
	cmd.Env = append(cmd.Environ(), "REMSTORE_API_KEYS="+apiKey)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if _, addr, ok := strings.Cut(lines.Text(), "listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return cmd, strings.TrimSpace(addr)
		}
	}
	t.Fatal("the server never said where it listens")
	return nil, ""
}

// kill -9 of the server under load, twice: every batch the server
// acknowledged is stored exactly once, in order, and nothing is stored in part.
// (The attack's figure: 31,216 acknowledged across two kill -9, none lost.)
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "remstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	db := dbtest.NewPostgresURL(t)
	const apiKey = "kill-key-0123456789abcdef"
	const writers = 8
	round := func(base string, stop <-chan struct{}, acked *sync.Map) {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: 5 * time.Second}
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("%d-%d-%d", time.Now().UnixNano(), w, i)
					body := fmt.Sprintf(`[{"role":"user","content":"q %s"},{"role":"assistant","content":"a %s"}]`, id, id)
					r, _ := http.NewRequest("POST", base+fmt.Sprintf("/v1/sessions/kill-%d/messages", w), strings.NewReader(body))
					r.Header.Set("Authorization", "Bearer "+apiKey)
					resp, err := client.Do(r)
					if err != nil {
						return // the server is gone
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 201 {
						acked.Store(id, w)
					}
				}
			}()
		}
		wg.Wait()
	}
	var acked sync.Map
	for k := range 3 {
		cmd, base := startServe(t, bin, db, apiKey)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { round(base, stop, &acked); close(done) }()
		time.Sleep(time.Second)
		if k < 2 {
			_ = cmd.Process.Signal(os.Kill) // kill -9, mid-stream
		}
		close(stop)
		<-done
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	// Check on the database directly.
	conn, err := repository.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rows []struct {
		Role    string `bun:"role"`
		Content string `bun:"content"`
		Session string `bun:"name"`
	}
	if err := conn.NewRaw(`SELECT m.role, m.content, s.name FROM messages m JOIN sessions s ON s.id = m.session_id
		ORDER BY s.name, m.created_at, m.id`).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for i, r := range rows {
		id := strings.TrimPrefix(strings.TrimPrefix(r.Content, "q "), "a ")
		count[id]++
		// Batches are whole and contiguous: every question is followed by its answer.
		if r.Role == "user" && (i+1 >= len(rows) || rows[i+1].Content != "a "+id) {
			t.Fatalf("batch %s stored in part", id)
		}
	}
	n := 0
	acked.Range(func(k, _ any) bool {
		n++
		if count[k.(string)] != 2 {
			t.Errorf("acknowledged batch %s stored %d times (messages)", k, count[k.(string)])
		}
		return true
	})
	if n == 0 {
		t.Fatal("nothing was acknowledged; the test proved nothing")
	}
	for id, c := range count {
		if c != 2 {
			t.Errorf("batch %s has %d messages", id, c)
		}
	}
	stats, _ := json.Marshal(map[string]int{"acknowledged": n, "stored": len(count)})
	t.Logf("two kill -9 under 8 writers: %s (stored beyond acknowledged: committed, answer lost with the server)", stats)
}

package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

func history() []models.HistoryMessage {
	ts := "2024-01-15T10:30:00+00:00"
	return []models.HistoryMessage{
		{Role: "user", Content: "yes", Timestamp: &ts},
		{Role: "assistant", Content: "2024-01-15", Timestamp: &ts, Compressed: true, OriginalLength: 500, EntityKey: "session-s-msg-1"},
		{Role: "tool", Content: "null", ToolCallID: "c", ToolName: "t", ToolArguments: []byte(`{"n":1,"s":"on"}`), Timestamp: &ts},
		{Role: "user", Content: "multi\nline: with: colons\x00 and NUL", Timestamp: nil},
	}
}

func TestFileNameCannotEscape(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := []string{"../x", "../../etc/passwd", "/etc/passwd", "a/b", `a\b`, `..\..\x`, "a\x00b", "", ".", "..", ".hidden",
		"CON", "nul.txt", "com1", strings.Repeat("x", 1000), strings.Repeat("é", 300), "~already-escaped", "sp ace", "550e8400-e29b-41d4-a716-446655440000"}
	seen := map[string]string{}
	for _, id := range ids {
		name := FileName(id)
		p := Path(dir, id)
		if filepath.Dir(p) != dir || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, ".") || len(name) > 255 {
			t.Errorf("FileName(%q) = %q escapes or is invalid", id, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("%q and %q share %q", prev, id, name)
		}
		seen[name] = id
	}
	if FileName("550e8400-e29b-41d4-a716-446655440000") != "550e8400-e29b-41d4-a716-446655440000.yaml" {
		t.Error("a UUID must keep the peer's file name")
	}
	// Write one file for every trick id: all land in dir.
	for _, id := range ids {
		if err := Append(context.Background(), dir, id, Invocation{Timestamp: time.Now(), AgentName: "a"}); err != nil {
			t.Fatalf("%q: %v", id, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	yamls := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			yamls++
		}
	}
	if yamls != len(ids) {
		t.Errorf("%d files for %d ids", yamls, len(ids))
	}
}

func TestAppendRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Date(2024, 1, 15, 10, 30, 0, 123456000, time.UTC)
	for i := range 2 {
		if err := Append(context.Background(), dir, "s1", Invocation{Timestamp: at, AgentName: "planner", Prompt: fmt.Sprint("p", i), RawSessionHistory: history(), PydanticMessagesCount: 3}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Read(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if f.SessionID != "s1" || len(f.Invocations) != 2 {
		t.Fatalf("%+v", f)
	}
	inv := f.Invocations[1]
	if inv["timestamp"] != "2024-01-15T10:30:00.123456+00:00" || inv["agent_name"] != "planner" || inv["prompt"] != "p1" ||
		inv["raw_history_count"] != 4 || inv["pydantic_messages_count"] != 3 {
		t.Errorf("invocation %v", inv)
	}
	h := inv["raw_session_history"].([]any)
	m1, m2, m3 := h[1].(map[string]any), h[2].(map[string]any), h[3].(map[string]any)
	if h[0].(map[string]any)["content"] != "yes" || m1["content"] != "2024-01-15" || m1["_compressed"] != true || m1["_entity_key"] != "session-s-msg-1" {
		t.Errorf("strings that look like other types changed: %v %v", h[0], m1)
	}
	if m2["content"] != "null" || m2["tool_arguments"].(map[string]any)["s"] != "on" || m3["timestamp"] != nil ||
		m3["content"] != "multi\nline: with: colons\x00 and NUL" {
		t.Errorf("values changed: %v %v", m2, m3)
	}
}

// RecordIn writes, and where it cannot (a directory under a file) it logs and
// returns rather than failing the caller.
func TestRecordIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	RecordIn(context.Background(), dir, "gate", "a", "p", history(), 1)
	if _, err := os.Stat(Path(dir, "gate")); err != nil {
		t.Fatalf("no file: %v", err)
	}
	RecordIn(context.Background(), filepath.Join(Path(dir, "gate"), "sub"), "gate", "a", "p", nil, 0)
}

// An invocation without a time is written with the time of the append, in
// UTC; one with a time keeps it (issue 54: the zero time was written as
// 0001-01-01T00:00:00+00:00).
func TestAppendTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	given := time.Date(2024, 1, 15, 12, 30, 0, 123456000, time.FixedZone("", 2*3600))
	for _, c := range []struct {
		name string
		at   time.Time
		want string // "" = the time of the append
	}{
		{"none", time.Time{}, ""},
		{"given", given, "2024-01-15T10:30:00.123456+00:00"},
	} {
		before := time.Now()
		if err := Append(context.Background(), dir, "t", Invocation{Timestamp: c.at, AgentName: c.name}); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		f, err := Read(dir, "t")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := f.Invocations[len(f.Invocations)-1]["timestamp"].(string)
		if c.want != "" {
			if got != c.want {
				t.Errorf("%s: timestamp %q, want %q", c.name, got, c.want)
			}
			continue
		}
		at, err := models.ParseTimestamp(got)
		if err != nil || !strings.HasSuffix(got, "+00:00") || at.Before(before.Truncate(time.Microsecond)) || at.After(after) {
			t.Errorf("%s: timestamp %q, want the time of the append in UTC", c.name, got)
		}
	}
}

func TestCorruptFileSetAside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := Path(dir, "c")
	if err := os.WriteFile(p, []byte("session_id: c\ninvocations: [\n  - {half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Append(context.Background(), dir, "c", Invocation{Timestamp: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(dir, "c")
	if err != nil || len(f.Invocations) != 1 {
		t.Fatalf("%+v %v", f, err)
	}
	aside, _ := filepath.Glob(p + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("corrupt file not kept aside: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); !strings.Contains(string(b), "{half") {
		t.Error("set-aside file changed")
	}
}

// 10 processes x 50 appends (and goroutines inside each) lose nothing.
func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	concurrentProcesses(t, 10, 50, "")
}

// The same with every lock wait bounded at 2 ms, so that most appends meet
// their bound (as under a load average of 12): each such invocation is set
// aside and taken in later, none lost (SPEC §6, amended).
func TestConcurrentProcessesShortWaits(t *testing.T) {
	t.Parallel()
	concurrentProcesses(t, 6, 30, "2ms")
}

func concurrentProcesses(t *testing.T, procs, each int, wait string) {
	dir := t.TempDir()
	var asides atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
			cmd.Env = append(os.Environ(), "AUDIT_HELPER_DIR="+dir, fmt.Sprintf("AUDIT_HELPER_N=%d", each), fmt.Sprintf("AUDIT_HELPER_ID=%d", p),
				"AUDIT_HELPER_WAIT="+wait)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs <- fmt.Errorf("helper %d: %v: %s", p, err, out)
			}
			var n int64
			if i := strings.Index(string(out), "set aside: "); i >= 0 {
				fmt.Sscan(string(out[i+len("set aside: "):]), &n)
			}
			asides.Add(n)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := Read(dir, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Invocations) != procs*each {
		t.Fatalf("%d invocations, want %d", len(f.Invocations), procs*each)
	}
	seen := map[string]bool{}
	for _, inv := range f.Invocations {
		seen[inv["prompt"].(string)] = true
	}
	if len(seen) != procs*each {
		t.Fatalf("%d distinct invocations", len(seen))
	}
	t.Logf("%d of %d invocations were set aside at their wait's bound", asides.Load(), procs*each)
	if wait != "" && asides.Load() == 0 {
		t.Fatalf("no wait reached its bound of %s: the test did not test setting aside", wait)
	}
}

// TestHelperAppender is the child of TestConcurrentProcesses.
func TestHelperAppender(t *testing.T) {
	dir := os.Getenv("AUDIT_HELPER_DIR")
	if dir == "" {
		return // not run as a helper: nothing to do
	}
	var n int
	fmt.Sscan(os.Getenv("AUDIT_HELPER_N"), &n)
	var wg sync.WaitGroup
	for g := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 5 {
				inv := Invocation{Timestamp: time.Now(), AgentName: "a", Prompt: fmt.Sprintf("%s-%d", os.Getenv("AUDIT_HELPER_ID"), i), RawSessionHistory: history()[:1]}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if d, err := time.ParseDuration(os.Getenv("AUDIT_HELPER_WAIT")); err == nil {
					ctx, cancel = context.WithTimeout(ctx, d)
				}
				if err := Append(ctx, dir, "shared", inv); err != nil {
					t.Error(err)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("set aside: %d\n", setAsides.Load())
}

// Issue 41: an audited pydantic-ai load records the system prompt it put
// first in what the model got, beside SPEC §6's keys.
func TestWritePydanticAIRecordsTheSystemPrompt(t *testing.T) {
	dir := t.TempDir()
	hist := []models.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}
	var out bytes.Buffer
	err := WritePydanticAI(context.Background(), &out, convert.Options{SystemPrompt: "You are a weather bot."},
		&Call{Dir: dir, SessionID: "s1", AgentName: "weather", Prompt: "next"},
		nil, func() ([]models.HistoryMessage, error) { return hist, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"content":"You are a weather bot."`) {
		t.Fatalf("the history sent lacks the system prompt: %s", out.String())
	}
	f, err := Read(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Invocations) != 1 || f.Invocations[0]["system_prompt"] != "You are a weather bot." ||
		f.Invocations[0]["pydantic_messages_count"] != 3 || f.Invocations[0]["raw_history_count"] != 2 {
		t.Fatalf("invocation %v", f.Invocations)
	}
}

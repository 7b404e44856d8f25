package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

// lowerBound sets the dump bound for one test. Such a test is not parallel:
// the parallel ones resume only once it has returned and restored it.
func lowerBound(t *testing.T, n int64) {
	old := maxFileBytes
	maxFileBytes = n
	t.Cleanup(func() { maxFileBytes = old })
}

// A session's dump is bounded (SPEC §6: what one tenant records can neither
// hide nor slow another's): the append that would take it past the bound
// is not written and says so, without parsing the file when its size alone
// says so (a dump near its bound takes many times its size to parse); a
// completion likewise; a call larger than the
// bound is refused before its record is built; a file already past it (the
// Python service's, an older remstore's) is neither parsed, changed nor set
// aside as corrupt, and a reader refuses it; an audited load goes on
// whatever the dump says.
func TestDumpBounded(t *testing.T) {
	const bound = 64 << 10
	lowerBound(t, bound)
	dir := t.TempDir()
	ctx := context.Background()
	const sid = "0b7e4a8c-2f64-4b53-9c1e-6f1d2a3b4c5d"
	prompt := strings.Repeat("p", 10<<10)
	n := 0
	var err error
	for ; n < 20; n++ {
		if err = Append(ctx, dir, sid, Invocation{Timestamp: time.Now(), Prompt: prompt, Exchange: Exchange{CallID: "c" + string(rune('a'+n))}}); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrTooLarge) || n < 4 || n > 6 || !strings.Contains(err.Error(), sid+".yaml would be") {
		t.Fatalf("after %d appends of 10 KiB into a 64 KiB dump: %v", n, err)
	}
	st, _ := os.Stat(Path(dir, sid))
	f, rerr := Read(dir, sid)
	if st == nil || st.Size() > bound || rerr != nil || len(f.Invocations) != n {
		t.Fatalf("the dump after the refusal: %v, %v, %d invocations of %d", st, rerr, len(f.Invocations), n)
	}
	// A completion that would pass the bound.
	big := json.RawMessage(`"` + strings.Repeat("a", 20<<10) + `"`)
	if err := Complete(ctx, dir, sid, Exchange{CallID: "ca", Answer: big}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a completion past the bound: %v", err)
	}
	if f2, _ := Read(dir, sid); f2 == nil || f2.Invocations[0]["answer"] != nil {
		t.Fatal("the refused completion was written")
	}
	// A call larger than the bound: refused before its nodes are built,
	// nothing created.
	hist := make([]models.HistoryMessage, 200)
	for i := range hist {
		hist[i] = models.HistoryMessage{Role: "assistant", Content: strings.Repeat("h", 1000)}
	}
	const other = "4d3c2b1a-0000-4000-8000-000000000001"
	if err := Append(ctx, dir, other, Invocation{RawSessionHistory: hist}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a 200 KB call into an empty dump: %v", err)
	}
	if _, err := os.Stat(Path(dir, other)); !os.IsNotExist(err) {
		t.Fatalf("a file was created: %v", err)
	}
	// A file already past the bound: untouched, unread.
	const planted = "4d3c2b1a-0000-4000-8000-000000000002"
	fat := "session_id: x\ninvocations: []\n# " + strings.Repeat("x", bound) + "\n"
	if err := os.WriteFile(Path(dir, planted), []byte(fat), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Append(ctx, dir, planted, Invocation{Prompt: "p"}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "would be at least") {
		t.Fatalf("append to a planted fat file (refused by its size, unparsed): %v", err)
	}
	if b, _ := os.ReadFile(Path(dir, planted)); string(b) != fat {
		t.Fatal("the fat file changed")
	}
	if _, err := Read(dir, planted); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "neither reads nor adds to it") {
		t.Fatalf("read of a fat file: %v", err)
	}
	// An audited load of a session whose dump is full: the load's answer is
	// whole, the call says why it is not recorded.
	var out bytes.Buffer
	call := &Call{Dir: dir, SessionID: sid, Prompt: prompt, ID: "x"}
	load := func() ([]models.HistoryMessage, error) {
		return []models.HistoryMessage{{Role: "user", Content: "hi"}}, nil
	}
	if err := WritePydanticAI(ctx, &out, convert.Options{}, call, nil, load, nil); err != nil || !strings.Contains(out.String(), `"content":"hi"`) {
		t.Fatalf("audited load into a full dump: %v %s", err, out.String())
	}
	if !errors.Is(call.Err, ErrTooLarge) {
		t.Fatalf("call.Err = %v", call.Err)
	}
}

// Set-aside invocations count towards the bound: a wait that reaches its
// end does not set one aside past it, and a reader reads them only within
// it.
func TestSetAsideBounded(t *testing.T) {
	const bound = 32 << 10
	lowerBound(t, bound)
	dir := t.TempDir()
	const sid = "0b7e4a8c-2f64-4b53-9c1e-6f1d2a3b4c5e"
	if err := Append(context.Background(), dir, sid, Invocation{Prompt: strings.Repeat("a", 12<<10)}); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockPath(context.Background(), Path(dir, sid)+".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	wait := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		return Append(ctx, dir, sid, Invocation{Prompt: strings.Repeat("b", 12<<10)})
	}
	if err := wait(); err != nil {
		t.Fatalf("the first set aside: %v", err)
	}
	if err := wait(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a set-aside past the bound: %v", err)
	}
	if n := len(pendingFiles(Path(dir, sid))); n != 1 {
		t.Fatalf("%d set aside, want 1", n)
	}
	f, err := Read(dir, sid)
	if err != nil || len(f.Invocations) != 2 || f.Unread != 0 {
		t.Fatalf("read: %v %+v", err, f)
	}
	maxFileBytes = 20 << 10 // the reader's budget ends before the set-aside one
	f, err = Read(dir, sid)
	if err != nil || len(f.Invocations) != 1 || f.Unread != 1 {
		t.Fatalf("read with less room: %v %d invocations, %d unread", err, len(f.Invocations), f.Unread)
	}
}

package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

// Invocation is one agent call: what it was asked and the history it got.
type Invocation struct {
	// Timestamp is when the call was made, written in UTC. The zero time
	// is none given: Append writes the time of the append instead (issue
	// 54: every invocation appended through the HTTP API said
	// 0001-01-01T00:00:00+00:00).
	Timestamp             time.Time
	AgentName             string
	Prompt                string
	RawSessionHistory     []models.HistoryMessage
	PydanticMessagesCount int
	// SystemPrompt is the system prompt remstore put first in the
	// pydantic-ai history it sent (the load's system prompt), written as
	// system_prompt beside the Python service's keys when set: what the model
	// received, whoever added it.
	SystemPrompt string
	// Exchange is what the model received and answered, when the caller
	// knows it.
	Exchange
}

// Exchange is models.Exchange: what one model call received and answered.
type Exchange = models.Exchange

// RecordIn appends an invocation to the session's file in dir, logging
// errors: auditing must not break an agent call, nor wait past ctx for
// another process's lock. The caller checks the switch
// (settings.Config.AuditEnabled); this package reads no environment.
// sessionID is the session's UUID (sessionstore.Store.ResolveID), never a
// name as a caller spelled it: names are per tenant, files are not.
func RecordIn(ctx context.Context, dir, sessionID, agentName, prompt string, raw []models.HistoryMessage, pydanticCount int) {
	_ = record(ctx, dir, sessionID, Invocation{AgentName: agentName, Prompt: prompt, RawSessionHistory: raw, PydanticMessagesCount: pydanticCount})
}

// record appends inv, stamped now, logging errors (RecordIn), which it
// returns for a caller that tells its own caller.
func record(ctx context.Context, dir, sessionID string, inv Invocation) error {
	inv.Timestamp = time.Now()
	err := Append(ctx, dir, sessionID, inv)
	if err != nil {
		slog.Warn("remstore: audit dump failed", "session", sessionID, "err", err)
	}
	return err
}

// MaxFileBytes bounds a session's dump file (the contract with the Python service: what one tenant
// records can neither hide nor slow another's, nor its own reads grow
// without end): an append or a completion that would take the file past
// it is not written (ErrTooLarge; the caller's agent call goes on), a
// set-aside invocation counts towards it, and Read reads no more. 32 MiB,
// the API's request limit (httpapi.DefaultMaxBodyBytes): a call as large as
// the largest request has room in a dump of its own, and a reader's work
// is bounded by what one request could send.
const MaxFileBytes = 32 << 20

// maxFileBytes is the bound in force: MaxFileBytes, lowered by tests.
var maxFileBytes int64 = MaxFileBytes

// ErrTooLarge: the session's dump would grow past MaxFileBytes (nothing is
// written: the call is not recorded) or, read, is larger than that.
var ErrTooLarge = errors.New("audit dump too large")

// tooLarge says which file and by how much.
func tooLarge(path string, n int64, what string) error {
	return fmt.Errorf("%w: %s %s %s, over the %s a session's dump may hold; this call is not recorded",
		ErrTooLarge, filepath.Base(path), what, sizeWords(n), sizeWords(maxFileBytes))
}

// sizeWords is a byte count as people read it: "84.0 MiB", "512 bytes".
func sizeWords(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

var windowsReserved = regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$`)

// FileName maps a session id to its file name. Ids made only of letters,
// digits, '.', '_' and '-' (at most 128, not starting with '.', not a Windows
// device name) keep the Python service's name, "{session_id}.yaml". Any other id
// (path separators, "..", NUL, very long, empty) becomes
// "~{cleaned prefix}-{sha256 of the id, 32 hex}.yaml": '~' never occurs in a
// kept name, so the two kinds cannot collide, and the hash keeps escaped ids apart.
func FileName(sessionID string) string {
	if safeName.MatchString(sessionID) && !strings.HasPrefix(sessionID, ".") && !windowsReserved.MatchString(sessionID) {
		return sessionID + ".yaml"
	}
	prefix := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, sessionID)
	if len(prefix) > 48 {
		prefix = prefix[:48]
	}
	sum := sha256.Sum256([]byte(sessionID))
	return "~" + prefix + "-" + hex.EncodeToString(sum[:16]) + ".yaml"
}

// Path is the file of a session in dir: sessionID is the session's UUID,
// so the file is "{uuid}.yaml".
func Path(dir, sessionID string) string { return filepath.Join(dir, FileName(sessionID)) }

// Append adds inv to the session's file in dir, creating dir and the file as
// needed. sessionID is the session's UUID (RecordIn). A file that would
// grow past MaxFileBytes is left as it is: the error is ErrTooLarge. Appends
// from goroutines and processes are serialized by a lock file; the new
// content goes to a temp file renamed over the old, so a reader
// never sees half a file. An existing file that does not parse is renamed to
// "<name>.corrupt-<unix nanos>" and a new one is started. Nothing is followed
// through a symlink (the file and its lock are opened O_NOFOLLOW; a symlink
// planted in their place is an error), files are created 0600, a directory
// writable by others without the sticky bit is refused, and the wait for the
// lock ends with ctx (DefaultLockWait when ctx has no deadline).
//
// No invocation is lost to a wait: when the wait ends
// first, the invocation is set aside in a file of its own beside the
// session's ("<name>.pending-<nanos>-<random>", written atomically, no lock
// needed), and the next Append takes every set-aside invocation in, in the
// order they were set aside, before its own; Read shows them meanwhile.
//
// An invocation without a Timestamp gets the time of the append.
func Append(ctx context.Context, dir, sessionID string, inv Invocation) error {
	if inv.Timestamp.IsZero() {
		inv.Timestamp = time.Now()
	}
	node, err := invocationNode(inv)
	if err != nil {
		return err
	}
	b, err := encodeNode(node)
	if err != nil {
		return fmt.Errorf("audit encode: %w", err)
	}
	return update(ctx, dir, sessionID, node, int64(len(b)), func(invs *yaml.Node) error {
		invs.Content = append(invs.Content, node)
		return nil
	})
}

// ErrNoCall: no invocation of the session's file has the call id Complete
// was given.
var ErrNoCall = errors.New("audit: no invocation with that call_id")

// Complete adds what only the caller knows (the answer, latency, usage,
// tools, settings) to the invocation with ex.CallID, the one a load
// recorded, under the same lock as Append. A wait that reaches its bound
// is an error here: there is no invocation of its own to set aside. A file
// that would grow past MaxFileBytes is left as it is (ErrTooLarge).
func Complete(ctx context.Context, dir, sessionID string, ex Exchange) error {
	if ex.CallID == "" {
		return errors.New("audit: complete needs a call_id")
	}
	if _, err := invocationNode(Invocation{Exchange: ex}); err != nil { // its JSON, checked before any lock
		return err
	}
	return update(ctx, dir, sessionID, nil, 0, func(invs *yaml.Node) error {
		for i := len(invs.Content) - 1; i >= 0; i-- {
			if id := mapValue(invs.Content[i], "call_id"); id != nil && id.Value == ex.CallID {
				return setExchange(invs.Content[i], ex)
			}
		}
		return ErrNoCall
	})
}

// update changes the session's file in dir under its lock: change gets the
// invocations (set-aside ones taken in first) and the file is rewritten
// when it returns nil. aside, when the lock wait ends first, is set aside
// for the next update (Append's invocation); without it the wait is the
// error. grow is the least the change adds to the file: what surely cannot
// fit is refused before the file is parsed (parsing a dump near its bound
// takes many times its size: 0.5 GB for 31 MiB).
func update(ctx context.Context, dir, sessionID string, aside *yaml.Node, grow int64, change func(invs *yaml.Node) error) error {
	if err := checkDir(dir); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultLockWait)
		defer cancel()
	}
	path := Path(dir, sessionID)
	unlock, err := lockPath(ctx, path+".lock")
	if err != nil && aside != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		if aerr := setAside(path, aside); errors.Is(aerr, ErrTooLarge) {
			return aerr
		} else if aerr != nil {
			return fmt.Errorf("audit lock: %w; and cannot set the invocation aside: %v", err, aerr)
		}
		setAsides.Add(1)
		slog.Info("remstore: audit file busy; the invocation is set aside for the next append", "session", sessionID, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit lock: %w", err)
	}
	defer unlock()

	if total := filesSize(path) + grow; grow > 0 && total > maxFileBytes {
		return tooLarge(path, total, "would be at least")
	}
	release, err := parseGate(ctx, filesSize(path))
	if err != nil {
		if aside != nil {
			if aerr := setAside(path, aside); aerr != nil {
				return fmt.Errorf("audit: %w; and cannot set the invocation aside: %v", err, aerr)
			}
			setAsides.Add(1)
			return nil
		}
		return err
	}
	defer release()
	doc, size, err := readDoc(path)
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	if errors.Is(err, errSymlink) {
		return fmt.Errorf("audit: %w", err)
	}
	if err != nil {
		aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().UnixNano())
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("audit: %v; and cannot set it aside: %w", err, rerr)
		}
		slog.Warn("remstore: corrupt audit file set aside", "file", aside, "err", err)
		doc = nil
	}
	if doc == nil {
		doc = newDoc(sessionID)
	}
	invs := mapValue(doc, "invocations")
	if invs == nil || invs.Kind != yaml.SequenceNode {
		invs = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		setMapValue(doc, "invocations", invs)
	}
	var taken []string
	for _, pf := range pendingFiles(path) {
		n, b, err := readPending(pf, maxFileBytes-size)
		if err != nil {
			slog.Warn("remstore: unreadable set-aside audit invocation left in place", "file", pf, "err", err)
			continue
		}
		size += b
		invs.Content = append(invs.Content, n)
		taken = append(taken, pf)
	}
	if err := change(invs); err != nil {
		return err
	}

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("audit encode: %w", err)
	}
	if n := int64(buf.Len()); n > maxFileBytes {
		return tooLarge(path, n, "would be")
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return err
	}
	for _, pf := range taken { // in the file now
		_ = os.Remove(pf)
	}
	return nil
}

// pendingSuffix marks a set-aside invocation's file; Read merges it into its
// session's file.
const pendingSuffix = ".pending-"

// asideSlots bounds the set-aside writes of this process that run at once:
// each is a short write and fsync, but a burst of waits timing out together
// would otherwise block a thread apiece in the file system.
var asideSlots = make(chan struct{}, 2)

// setAsides counts the invocations this process set aside (tests).
var setAsides atomic.Int64

// setAside writes one invocation to a file of its own beside path, unless
// the file and what is set aside for it would then pass MaxFileBytes.
func setAside(path string, node *yaml.Node) error {
	asideSlots <- struct{}{}
	defer func() { <-asideSlots }()
	b, err := encodeNode(node)
	if err != nil {
		return err
	}
	if total := filesSize(path) + int64(len(b)); total > maxFileBytes {
		return tooLarge(path, total, "with the calls set aside for it would be")
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	return writeAtomic(fmt.Sprintf("%s%s%020d-%s", path, pendingSuffix, time.Now().UnixNano(), hex.EncodeToString(r[:])), b)
}

// encodeNode is an invocation as YAML on its own (as set aside; in the
// file it takes more, indented).
func encodeNode(node *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// filesSize is the size of the file at path and of what is set aside for
// it, as the directory says (nothing read).
func filesSize(path string) int64 {
	var n int64
	for _, p := range append(pendingFiles(path), path) {
		if st, err := os.Lstat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// pendingFiles lists the set-aside invocations of the file at path, oldest
// first (their names sort by the time they were set aside).
func pendingFiles(path string) []string {
	names, _ := filepath.Glob(path + pendingSuffix + "*") // names are made of [A-Za-z0-9._~-]: no pattern characters
	sort.Strings(names)
	return names
}

// readPending parses a set-aside invocation of at most limit bytes and
// says its size.
func readPending(file string, limit int64) (*yaml.Node, int64, error) {
	b, err := readBounded(file, limit)
	if err != nil {
		return nil, 0, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, 0, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, 0, errors.New("not one invocation")
	}
	return doc.Content[0], int64(len(b)), nil
}

// withPending adds the set-aside invocations of the file at path to f, as
// long as what is read stays within budget bytes; the others are counted
// in f.Unread.
func withPending(f *File, path string, budget int64) *File {
	for _, pf := range pendingFiles(path) {
		b, err := readBounded(pf, budget)
		if errors.Is(err, ErrTooLarge) {
			f.Unread++
			continue
		}
		if err != nil {
			continue
		}
		var inv map[string]any
		if yaml.Unmarshal(b, &inv) == nil && inv != nil {
			f.Invocations = append(f.Invocations, inv)
			budget -= int64(len(b))
		}
	}
	return f
}

func newDoc(sessionID string) *yaml.Node {
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	setMapValue(doc, "session_id", strNode(sessionID))
	setMapValue(doc, "invocations", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"})
	return doc
}

// readDoc returns the top mapping of an existing file and its size, nil
// when there is no file (or an empty one), and an error when it is not a
// mapping of YAML or is larger than MaxFileBytes (ErrTooLarge, not parsed).
func readDoc(path string) (*yaml.Node, int64, error) {
	b, err := readBounded(path, maxFileBytes)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(bytes.TrimSpace(b)) == 0) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, 0, fmt.Errorf("parse %s: %w", path, err)
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("parse %s: not a mapping", path)
	}
	return n.Content[0], int64(len(b)), nil
}

func invocationNode(inv Invocation) (*yaml.Node, error) {
	// What surely cannot fit is refused before its nodes are built (a
	// YAML scalar takes at least half its JSON's bytes): an audited load of a
	// long session would otherwise build a tree many times its size first.
	size := int64(len(inv.Prompt) + len(inv.SystemPrompt))
	for _, f := range jsonFields(&inv.Exchange) {
		size += int64(len(*f.v))
	}
	tooBig := func() error {
		return fmt.Errorf("%w: this call's record is over %s, more than the %s a session's dump may hold; it is not recorded",
			ErrTooLarge, sizeWords(size/2), sizeWords(maxFileBytes))
	}
	if size > 2*maxFileBytes {
		return nil, tooBig()
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	setMapValue(m, "timestamp", strNode(models.FormatTimestamp(inv.Timestamp)))
	setMapValue(m, "agent_name", strNode(inv.AgentName))
	setMapValue(m, "prompt", strNode(inv.Prompt))
	setMapValue(m, "raw_history_count", intNode(len(inv.RawSessionHistory)))
	setMapValue(m, "pydantic_messages_count", intNode(inv.PydanticMessagesCount))
	if inv.SystemPrompt != "" {
		setMapValue(m, "system_prompt", strNode(inv.SystemPrompt))
	}
	if err := setExchange(m, inv.Exchange); err != nil {
		return nil, err
	}
	hist := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, msg := range inv.RawSessionHistory {
		j, err := msg.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("audit message %d: %w", i, err)
		}
		if size += int64(len(j)); size > 2*maxFileBytes {
			return nil, tooBig()
		}
		n, err := jsonToNode(j)
		if err != nil {
			return nil, fmt.Errorf("audit message %d: %w", i, err)
		}
		hist.Content = append(hist.Content, n)
	}
	setMapValue(m, "raw_session_history", hist)
	return m, nil
}

// setExchange writes ex's fields that are set into the invocation m,
// replacing what m had for them.
func setExchange(m *yaml.Node, ex Exchange) error {
	if ex.CallID != "" {
		setMapValue(m, "call_id", strNode(ex.CallID))
	}
	if ex.Model != "" {
		setMapValue(m, "model", strNode(ex.Model))
	}
	for _, f := range jsonFields(&ex) {
		if len(*f.v) == 0 {
			continue
		}
		n, err := jsonToNode(*f.v)
		if err != nil {
			return fmt.Errorf("audit %s: %w", f.key, err)
		}
		setMapValue(m, f.key, n)
	}
	if ex.LatencyMS != nil {
		setMapValue(m, "latency_ms", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(*ex.LatencyMS, 'f', 3, 64)})
	}
	return nil
}

// jsonToNode turns JSON into a block-style YAML node, keeping key order.
func jsonToNode(j []byte) (*yaml.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(j, &n); err != nil {
		return nil, err
	}
	var fix func(*yaml.Node)
	fix = func(x *yaml.Node) {
		x.Style &^= yaml.FlowStyle
		if x.Kind == yaml.ScalarNode && x.Tag == "!!str" {
			x.Style = strStyle(x.Value)
		}
		for _, c := range x.Content {
			fix(c)
		}
	}
	fix(&n)
	return n.Content[0], nil
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: strStyle(s)}
}

// strStyle double-quotes strings that a YAML 1.1 reader (PyYAML) would read
// as something else (timestamps, yes/no, numbers, null) or that hold control
// characters; yaml.v3 itself only guards against YAML 1.2's resolution.
func strStyle(s string) yaml.Style {
	var probe any
	if s == "" || strings.ContainsAny(s, "\x00\r\t\u0085\u2028\u2029") || yaml11Special.MatchString(s) ||
		(yaml.Unmarshal([]byte(s), &probe) == nil && !isString(probe)) {
		return yaml.DoubleQuotedStyle
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f || r == 0xfeff {
			return yaml.DoubleQuotedStyle
		}
	}
	return 0
}

var yaml11Special = regexp.MustCompile(`(?i)^(y|yes|n|no|on|off|true|false|null|~|[-+]?\.?(inf|nan)|[-+]?[0-9_]+(\.[0-9_]*)?([eE][-+]?[0-9]+)?|[-+]?0[xob][0-9a-f_]+|[0-9]+(:[0-5]?[0-9])+(\.[0-9_]*)?|\d{4}-\d\d?-\d\d?([Tt ].*)?)$`)

func isString(v any) bool { _, ok := v.(string); return ok }

func intNode(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(n)}
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setMapValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// DefaultLockWait bounds the wait for another process's lock on a session's
// file when the caller's context has no deadline of its own.
const DefaultLockWait = 30 * time.Second

// errSymlink marks a file that is a symlink: never followed, never replaced.
var errSymlink = errors.New("is a symlink; refusing to follow it")

// readBounded reads the file at path, never through a symlink, and no
// more than limit bytes of it: a larger file is ErrTooLarge, unread.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) && strings.Contains(err.Error(), "symlink") {
			return nil, fmt.Errorf("%s %w", path, errSymlink)
		}
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		return nil, tooLargeRead(path, st.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, tooLargeRead(path, int64(len(b)))
	}
	return b, err
}

// tooLargeRead is a file past the bound, as a reader meets it: nothing
// more is recorded in it, and what it holds is read with other tools.
func tooLargeRead(path string, n int64) error {
	return fmt.Errorf("%w: %s is %s, over the %s a session's dump may hold; remstore neither reads nor adds to it (move it away to start a new one)",
		ErrTooLarge, filepath.Base(path), sizeWords(n), sizeWords(maxFileBytes))
}

// checkDir creates the directory (0700) when missing and refuses one that
// others can write to without the sticky bit: there, anyone could plant a
// symlink or swap a file between our check and our write.
func checkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("audit dir: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("audit dir: %w", err)
	}
	if m := st.Mode(); m&0o022 != 0 && m&os.ModeSticky == 0 {
		return fmt.Errorf("audit dir %s is writable by group or others without the sticky bit (mode %v); refusing it", dir, m.Perm())
	}
	return nil
}

// writeAtomic writes a temp file (0600) in the same directory and renames it
// over path: a rename replaces the directory entry itself, so a symlink
// planted at path is replaced, never followed.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".audit-*.tmp")
	if err != nil {
		return fmt.Errorf("audit temp file: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("audit write: %w", werr)
	}
	return nil
}

// File is an audit file as read back.
type File struct {
	SessionID   string           `yaml:"session_id" json:"session_id"`
	Invocations []map[string]any `yaml:"invocations" json:"invocations"`
	// Unread counts the invocations set aside for the file (Append) that
	// were not read: with them, more than MaxFileBytes.
	Unread int `yaml:"-" json:"unread,omitempty"`
}

// Read parses the session's audit file in dir, with the invocations set
// aside for it (Append) after its own. sessionID is the session's UUID
// (RecordIn). Together they are read up to MaxFileBytes: a larger file is
// ErrTooLarge, unparsed, so a reader's work is bounded whatever a writer
// (another program, the Python service) put there.
func Read(dir, sessionID string) (*File, error) {
	return ReadContext(context.Background(), dir, sessionID)
}

// ReadContext is Read for a request: a wait for a big parse (parseGate)
// ends with ctx, or after DefaultLockWait, and ctx's reader (WithReader)
// waits for its own turn.
func ReadContext(ctx context.Context, dir, sessionID string) (*File, error) {
	path := Path(dir, sessionID)
	ctx, cancel := context.WithTimeout(ctx, DefaultLockWait)
	defer cancel()
	release, err := parseGate(ctx, filesSize(path))
	if err != nil {
		return nil, err
	}
	defer release()
	b, err := readBounded(path, maxFileBytes)
	if errors.Is(err, os.ErrNotExist) && len(pendingFiles(path)) > 0 {
		return withPending(&File{SessionID: sessionID}, path, maxFileBytes), nil
	}
	if err != nil {
		return nil, err
	}
	f, err := parseFile(b, FileName(sessionID))
	if err != nil {
		return nil, err
	}
	return withPending(f, path, maxFileBytes-int64(len(b))), nil
}

// Dumps over bigDump bytes are parsed at most maxBigParses at a time,
// process-wide: parsing a dump of 31 MiB took 1.85 s and about 175 MB, and
// one tenant's loads of 20 such dumps at once took serve to 3.5 GB and
// another tenant's stores from 8 to 420 ms. A caller waits its context
// (an append that waits too long is set aside, as for the file's lock).
const (
	bigDump      = 1 << 20
	maxBigParses = 2
)

var bigParses = make(chan struct{}, maxBigParses)

// readerKey is the context key of WithReader.
type readerKey struct{}

// WithReader returns ctx marked as read for who (serve passes the caller:
// an API key not bound to a user, or the user). The reads and appends of
// one reader parse big dumps one at a time, so a reader holds at most one
// of the process's maxBigParses and queues for its own turn, not in front
// of another reader's. Without it (the CLI, the library) only the
// process-wide bound applies.
func WithReader(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, readerKey{}, who)
}

// readerTurns are the readers with a big parse running or waiting: each
// one's turn (a channel of one) and how many hold or wait for it.
var readerTurns = struct {
	sync.Mutex
	by map[string]*readerTurn
}{by: map[string]*readerTurn{}}

type readerTurn struct {
	c chan struct{}
	n int
}

// readerGate takes who's turn at a big parse, or fails when ctx ends.
func readerGate(ctx context.Context, who string) (release func(), err error) {
	readerTurns.Lock()
	t := readerTurns.by[who]
	if t == nil {
		t = &readerTurn{c: make(chan struct{}, 1)}
		readerTurns.by[who] = t
	}
	t.n++
	readerTurns.Unlock()
	leave := func() {
		readerTurns.Lock()
		if t.n--; t.n == 0 {
			delete(readerTurns.by, who)
		}
		readerTurns.Unlock()
	}
	select {
	case t.c <- struct{}{}:
		return func() { <-t.c; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, fmt.Errorf("audit: another large dump of yours is being read: %w", ctx.Err())
	}
}

// parseGate admits the parse of a dump of size bytes: at once when it is
// small, else when its reader's turn (WithReader) and one of maxBigParses
// are free, or ctx ends.
func parseGate(ctx context.Context, size int64) (release func(), err error) {
	if size <= bigDump {
		return func() {}, nil
	}
	mine := func() {}
	if who, ok := ctx.Value(readerKey{}).(string); ok {
		if mine, err = readerGate(ctx, who); err != nil {
			return nil, err
		}
	}
	select {
	case bigParses <- struct{}{}:
		return func() { <-bigParses; mine() }, nil
	case <-ctx.Done():
		mine()
		return nil, fmt.Errorf("audit: %d large dumps are being read already: %w", maxBigParses, ctx.Err())
	}
}

func parseFile(b []byte, name string) (*File, error) {
	var f File
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parse audit file %s: %w", name, err)
	}
	return &f, nil
}

// Call names an audited agent call: where its dump goes and what it says.
type Call struct {
	// SessionID is the session's UUID (RecordIn).
	Dir, SessionID, AgentName, Prompt string
	// ID is the invocation's call_id (NewCallID), which Complete finds.
	ID string
	// Err is set by WritePydanticAI when it could not record the call
	// (logged; the load goes on): the dump is full (ErrTooLarge), or the
	// directory cannot be written. Nothing has the call id then.
	Err error
}

// WritePydanticAI writes a session's history to w as pydantic-ai JSON for an
// agent call: the one rule the CLI and serve share. Without an audit (call
// nil) and without co.Strict it streams from each, a tool run at a time, in
// memory that stays flat; otherwise it loads the whole history first (load):
// the dump records it, and strict writes nothing unless all of it converts.
// begin, when set, runs just before a collected answer's first byte (serve
// sets its headers there).
func WritePydanticAI(ctx context.Context, w io.Writer, co convert.Options, call *Call,
	each func(func(models.HistoryMessage) error) error, load func() ([]models.HistoryMessage, error), begin func()) error {
	if call == nil && !co.Strict {
		_, err := convert.WriteStream(w, co, each)
		return err
	}
	hist, err := load()
	if err != nil {
		return err
	}
	msgs, err := convert.Collect(hist, co)
	if err != nil {
		return err
	}
	if call != nil {
		call.Err = record(ctx, call.Dir, call.SessionID, Invocation{AgentName: call.AgentName, Prompt: call.Prompt,
			RawSessionHistory: hist, PydanticMessagesCount: len(msgs), SystemPrompt: co.SystemPrompt, Exchange: Exchange{CallID: call.ID}})
	}
	if begin != nil {
		begin()
	}
	_, err = w.Write(convert.Marshal(msgs))
	return err
}

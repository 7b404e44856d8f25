package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// LookupArgs are rem_lookup's arguments.
type LookupArgs struct {
	Key string `json:"key" jsonschema:"the REM LOOKUP key from a truncated message, bare or as 'REM LOOKUP <key>'"`
}

// HistoryArgs are session_history's arguments.
type HistoryArgs struct {
	SessionID string `json:"session_id" jsonschema:"the session id"`
	Compress  *bool  `json:"compress,omitempty" jsonschema:"cut long assistant answers (default true)"`
	Offset    int    `json:"offset,omitempty" jsonschema:"the position of the first message to return (default 0); a truncated answer names the offset of the next page"`
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many messages (default 200, at most 2000)"`
}

// A session_history answer is one page of the history, so that a session
// of 200,000 messages costs the server what a page does: at most limit
// messages (HistoryLimit when not given, MaxHistoryLimit at most), and no
// more than MaxHistoryBytes of JSON (a single message larger than that is
// sent alone). When messages follow the page, a second text item says so
// and names the offset of the next page.
const (
	HistoryLimit    = 200
	MaxHistoryLimit = 2000
	MaxHistoryBytes = 2 << 20
)

// historyDescription is session_history's description, which the model
// reads: what a page is, and how to get the next one.
var historyDescription = fmt.Sprintf("The messages of a session as a JSON array, in order (long assistant answers cut with REM LOOKUP keys "+
	"unless compress is false). One page at a time: at most limit messages (default %d, at most %d) and about %d MiB, "+
	"from offset (default 0). When more messages follow, a second text item says \"truncated\" and names the offset "+
	"to call again with for the next page.", HistoryLimit, MaxHistoryLimit, MaxHistoryBytes>>20)

// errPageFull stops a history load once the page is full.
var errPageFull = errors.New("the page is full")

// historyPage loads the page of the session's history that a asks for:
// the JSON array, and, when messages follow it, the offset of the next page
// (-1: none follow). Messages before the offset are read and dropped as
// they stream, never held.
func historyPage(ctx context.Context, st Store, a HistoryArgs) (page []byte, next int, err error) {
	limit := a.Limit
	switch {
	case a.Offset < 0:
		return nil, 0, &models.FieldError{Index: -1, Field: "offset", Reason: "must be >= 0"}
	case limit < 0 || limit > MaxHistoryLimit:
		return nil, 0, &models.FieldError{Index: -1, Field: "limit", Reason: fmt.Sprintf("must be 1 to %d (0 or absent: %d); page with offset", MaxHistoryLimit, HistoryLimit)}
	case limit == 0:
		limit = HistoryLimit
	}
	compress := a.Compress == nil || *a.Compress
	page, pos, n, next := []byte{'['}, 0, 0, -1
	err = st.LoadEach(ctx, a.SessionID, sessionstore.LoadOptions{NoCompress: !compress}, func(m models.HistoryMessage) error {
		if pos < a.Offset {
			pos++
			return nil
		}
		if n == limit {
			next = pos
			return errPageFull
		}
		mark := len(page)
		if n > 0 {
			page = append(page, ',')
		}
		var err error
		if page, err = m.AppendJSON(page); err != nil {
			return fmt.Errorf("message %d: %w", pos, err)
		}
		if n > 0 && len(page) > MaxHistoryBytes {
			page, next = page[:mark], pos
			return errPageFull
		}
		pos, n = pos+1, n+1
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, 0, err
	}
	return append(page, ']'), next, nil
}

func text(s string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Store is what the tools read: a session store bound to one tenant.
// *sessionstore.Store implements it.
type Store interface {
	Lookup(ctx context.Context, key string) (string, error)
	LoadEach(ctx context.Context, sessionKey string, o sessionstore.LoadOptions, fn func(models.HistoryMessage) error) error
	Enabled() bool
}

// toolError is a tool's error result: the code of the error's class
// (sessionstore.Classify, as the API answers it), then the message.
func toolError(err error) *mcp.CallToolResult {
	return text(sessionstore.Classify(err).Code+": "+err.Error(), true)
}

var _ Store = (*sessionstore.Store)(nil)

// strictArguments refuses a tool call whose arguments hold what JSON allows
// but the store refuses in a body (models.CheckJSONValue, the HTTP API's
// check): above all a key twice, which the SDK would decode to its last
// value in silence. The error names the key. It runs before the SDK reads
// the arguments, on every transport.
func strictArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
			if reason := models.CheckJSONValue(call.Params.Arguments); reason != "" {
				return toolError(&models.FieldError{Index: -1, Field: "arguments", Reason: reason}), nil
			}
		}
		return next(ctx, method, req)
	}
}

// New returns an MCP server whose tools read st.
func New(st Store, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remstore", Version: version}, nil)
	s.AddReceivingMiddleware(strictArguments)
	mcp.AddTool(s, &mcp.Tool{
		Name:        sessionstore.LookupToolName,
		Description: sessionstore.LookupToolDescription,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a LookupArgs) (*mcp.CallToolResult, any, error) {
		if !st.Enabled() {
			return toolError(sessionstore.ErrDisabled), nil, nil
		}
		full, err := st.Lookup(ctx, a.Key)
		if err != nil {
			return toolError(err), nil, nil
		}
		return text(full, false), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "session_history",
		Description: historyDescription,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a HistoryArgs) (*mcp.CallToolResult, any, error) {
		if !st.Enabled() {
			return toolError(sessionstore.ErrDisabled), nil, nil
		}
		page, next, err := historyPage(ctx, st, a)
		if err != nil {
			return toolError(err), nil, nil
		}
		res := text(string(page), false)
		if next >= 0 {
			res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf(
				"truncated: the array holds messages %d to %d of the history, and more follow; "+
					"call session_history again with offset %d for the next page", max(a.Offset, 0), next-1, next)})
		}
		return res, nil, nil
	})
	return s
}

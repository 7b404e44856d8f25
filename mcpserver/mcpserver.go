package mcpserver

import (
	"bytes"
	"context"

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
}

func text(s string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Store is what the tools read: a session store bound to one tenant.
// *sessionstore.Store implements it.
type Store interface {
	Lookup(ctx context.Context, key string) (string, error)
	Load(ctx context.Context, sessionKey string, o sessionstore.LoadOptions) ([]models.HistoryMessage, error)
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
		Description: "The messages of a session as a JSON array (long assistant answers cut with REM LOOKUP keys unless compress is false).",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a HistoryArgs) (*mcp.CallToolResult, any, error) {
		if !st.Enabled() {
			return toolError(sessionstore.ErrDisabled), nil, nil
		}
		compress := a.Compress == nil || *a.Compress
		h, err := st.Load(ctx, a.SessionID, sessionstore.LoadOptions{NoCompress: !compress})
		if err != nil {
			return toolError(err), nil, nil
		}
		var b bytes.Buffer
		if err := models.EncodeHistory(&b, h); err != nil {
			return text(err.Error(), true), nil, nil
		}
		return text(b.String(), false), nil, nil
	})
	return s
}

package viewer_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remopenai"
)

// The call page of a Go agent's model call tells the truth about it: a
// turn of openai-go's Chat Completions run by sdk.RunTurn through serve,
// its HTTP client through sdk.Transport, recorded with auditing on. In
// Chromium the page shows the call's time (it showed year 1), the system
// prompt the request carried (it said "not in the audit dump"), the tools
// offered, the answer, the usage and how many messages the request sent
// (it said "0 pydantic-ai messages sent"); a tool result's call is labelled
// as stored with the answer that made it, not synthesized.
func TestGoSDKCallPageInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := t.TempDir()
	url := agenttest.NewServe(t, dbtest.NewPostgres(t), 0, func(o *httpapi.Options) { o.AuditEnabled, o.AuditDir, o.UI = true, dir, true })
	c, err := client.New(url, client.Options{APIKey: agenttest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	rec := &fakellm.Recorder{}
	model := httptest.NewServer(fakellm.OpenAI(rec))
	t.Cleanup(model.Close)
	llm := openai.NewClient(option.WithBaseURL(model.URL), option.WithAPIKey("test"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: sdk.Transport(nil)}))
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "fetch_guide",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})}
	ask := func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
		msgs, err := remopenai.Messages(h, remopenai.Options{System: agenttest.System})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := llm.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-test", Tools: tools, Messages: msgs})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return remopenai.FromCompletion(resp)
	}
	tool := func(_ context.Context, call models.ToolCall) (models.HistoryMessage, error) {
		return sdk.ToolResult(call, fakellm.RunTool(call.Name, call.Arguments)), nil
	}
	before := time.Now().UTC()
	if _, err := sdk.RunTurn(context.Background(), c.Agent(), agenttest.Session, fakellm.Prompts[0], ask, tool); err != nil {
		t.Fatal(err)
	}
	calls := len(rec.Bodies())
	if calls < 2 {
		t.Fatalf("%d model calls: the scripted turn calls its tools first", calls)
	}
	info, err := c.GetSession(context.Background(), agenttest.Session, client.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t, bin, 90*time.Second)
	var when, system, tools2, answer, tokens, history, messages string
	last := strconv.Itoa(calls - 1) // the call that saw the tools' results
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/ui/sessions/"+info.Session.ID.String()+"/audit/"+last),
		chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SendKeys("#key", agenttest.APIKey, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	var page, loc string
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(wctx, chromedp.WaitVisible("#callinfo", chromedp.ByID)); err != nil {
		_ = chromedp.Run(ctx, chromedp.Location(&loc), chromedp.Text("body", &page, chromedp.ByQuery))
		t.Fatalf("the call page did not show (%v) at %s: %.500s", err, loc, page)
	}
	if err := chromedp.Run(ctx,
		chromedp.AttributeValue(`#callinfo time`, "datetime", &when, nil, chromedp.ByQuery),
		chromedp.Text("#systemprompt", &system, chromedp.ByID),
		chromedp.Text("#calltools", &tools2, chromedp.ByID),
		chromedp.Text("#callanswer", &answer, chromedp.ByID),
		chromedp.Text("#calltokens", &tokens, chromedp.ByID),
		chromedp.Text("#callhistory", &history, chromedp.ByID),
		chromedp.Text("#callmessages", &messages, chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err == nil {
		shots := filepath.Join("..", ".test-output", "ui")
		_ = os.MkdirAll(shots, 0o755)
		_ = os.WriteFile(filepath.Join(shots, "go-sdk-call.png"), png, 0o644)
	}
	at, err := time.Parse(time.RFC3339Nano, when)
	if err != nil || at.Before(before.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("the call's time %q (%v), want between %s and now", when, err, before.Format(time.RFC3339Nano))
	}
	if !strings.Contains(system, agenttest.System) || !strings.Contains(system, "in the request the model received") {
		t.Errorf("system prompt: %q", system)
	}
	if !strings.Contains(tools2, "get_weather") || !strings.Contains(tools2, "fetch_guide") {
		t.Errorf("tools offered: %q", tools2)
	}
	if !strings.Contains(answer, "chat.completion") {
		t.Errorf("answer: %.300q", answer)
	}
	if !strings.Contains(tokens, " in, ") || strings.Contains(tokens, "not recorded") {
		t.Errorf("this call's tokens: %q", tokens)
	}
	if !strings.Contains(history, "messages sent in the request") || strings.Contains(history, "pydantic-ai") {
		t.Errorf("history line: %q", history)
	}
	if m := strings.ToLower(messages); !strings.Contains(m, "tool-call (stored with the answer above)") || strings.Contains(m, "synthesized") ||
		!strings.Contains(m, "tool calls only") { // the labels are drawn upper case
		t.Errorf("the messages the call got: %.600q", messages)
	}
}

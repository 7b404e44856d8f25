package visible_test

import (
	"encoding/json"
	"testing"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

func row(t *testing.T, msg string) models.HistoryMessage {
	t.Helper()
	ms, err := models.DecodeHistory([]byte("[" + msg + "]"))
	if err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

// The view holds what each source, item and reasoning item sends beside
// the row's text, where a reader finds it: files in Media, reasoning in
// Reasoning, the rest whole in Other.
func TestViewShowsWhatIsSent(t *testing.T) {
	v := visible.Of(row(t, `{"role":"user","content":"hi","pydantic_ai":{"message":{"kind":"request","instructions":"Answer in French."},"parts":[{"part_kind":"user-prompt","content":["hi",{"kind":"image-url","url":"https://img.example/a.png","media_type":"image/png"},{"kind":"binary","data":"AAEC","media_type":"application/pdf","identifier":"doc"},{"kind":"cache-point"}]}]}}`))
	if len(v.Withheld) != 0 || v.Text != "hi" || len(v.Media) != 2 || v.Media[0].URL != "https://img.example/a.png" ||
		v.Media[1].Data != "AAEC" || v.Media[1].Kind != "document" || len(v.Other) != 1 || v.Other[0].Kind != "instructions" {
		t.Errorf("a multimodal pydantic-ai prompt: %+v", v)
	}
	v = visible.Of(row(t, `{"role":"assistant","content":"Done.","pydantic_ai":{"message":{"kind":"response"},"parts":[{"part_kind":"thinking","content":"look it up","signature":"sig"},{"part_kind":"builtin-tool-return","tool_name":"web_search","content":{"hits":["https://news.example"]}},{"part_kind":"text"}],"from_row":[2]}}`))
	if len(v.Withheld) != 0 || len(v.Reasoning) != 1 || v.Reasoning[0].Text != "look it up" || v.Reasoning[0].Source != visible.PydanticAIKey ||
		len(v.Other) != 1 || v.Other[0].Kind != "builtin-tool-return" {
		t.Errorf("a pydantic-ai response: %+v", v)
	}
	v = visible.Of(row(t, `{"role":"assistant","content":"","openai_agents":{"type":"local_shell_call_output","id":"o1","output":"root:x:0:0"}}`))
	if len(v.Withheld) != 0 || len(v.Other) != 1 || v.Other[0].Kind != "local_shell_call_output" {
		t.Errorf("a shell call's output: %+v", v)
	}
	v = visible.Of(row(t, `{"role":"tool","content":"ok","tool_call_id":"c1","tool_name":"f","openai_agents":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"ok"},{"type":"input_file","file_id":"file-1","filename":"a.pdf"}]}}`))
	if len(v.Withheld) != 0 || v.Result == nil || v.Result.CallID != "c1" || len(v.Media) != 1 || v.Media[0].FileID != "file-1" {
		t.Errorf("an output with a file: %+v", v)
	}
	v = visible.Of(row(t, `{"role":"assistant","content":"4.","reasoning":[{"provider":"google","item":{"on":"call","call":1,"signature":"c2ln"}},{"provider":"langchaingo","item":{"reasoning_content":"free text no adapter sends"}}]}`))
	if len(v.Withheld) != 0 || len(v.Reasoning) != 1 || v.Reasoning[0].On != "call" || v.Reasoning[0].Call != 1 {
		t.Errorf("a call's signature, and another provider's item: %+v", v)
	}
	if rs := v.ReasoningFor(visible.Google); len(rs) != 1 {
		t.Errorf("ReasoningFor: %+v", rs)
	}
	// A call Gemini made unsigned: marked, nothing to send; a text's item
	// without a signature is still withheld.
	v = visible.Of(row(t, `{"role":"assistant","content":"","reasoning":[{"provider":"google","item":{"on":"call"}},{"provider":"google","item":{"on":"call","call":1,"signature":null}}]}`))
	if len(v.Withheld) != 0 || len(v.Reasoning) != 2 || v.Reasoning[0].Kind != "unsigned" || v.Reasoning[0].Seal != "" || v.Reasoning[1].Call != 1 {
		t.Errorf("calls Gemini made unsigned: %+v", v)
	}
	if v = visible.Of(row(t, `{"role":"assistant","content":"4.","reasoning":[{"provider":"google","item":{"on":"text"}}]}`)); !v.Withholds(visible.ReasoningKey) {
		t.Errorf("a text's item without a signature: %+v", v)
	}
}

// A source or item the view withholds any of is not sent at all: nothing
// of it is in the view, and the store's error names the field.
func TestWithheldSourceIsOutOfTheView(t *testing.T) {
	v := visible.Of(row(t, `{"role":"user","content":"hi","pydantic_ai":{"message":{"kind":"request"},"parts":[{"part_kind":"user-prompt","content":["hi",{"kind":"image-url","url":"https://img.example/a.png"},{"kind":"binary"}]}]}}`))
	if !v.Withholds(visible.PydanticAIKey) || len(v.Media) != 0 {
		t.Errorf("%+v", v)
	}
	fe, ok := models.AsFieldError(v.Err(3))
	if !ok || fe.Index != 3 || fe.Field != "pydantic_ai.parts[0].content[2].data" {
		t.Errorf("Err: %v", v.Err(3))
	}
	if v.Withholds(visible.ReasoningKey) || visible.Of(models.HistoryMessage{Role: "user", Content: "x"}).Err(0) != nil {
		t.Error("withholds what it does not hold")
	}
	b, _ := json.Marshal(v.Withheld)
	if len(v.Withheld) != 1 {
		t.Errorf("withheld: %s", b)
	}
}

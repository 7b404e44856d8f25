package remgenai_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remgenai"
)

func TestRefusesWhatItCannotKeep(t *testing.T) {
	for name, c := range map[string]struct{ body, field string }{
		"inline data":  {`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"},{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}}]}`, "candidates[0].content.parts[1].part"},
		"no call name": {`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"","args":{}}}]}}]}`, "candidates[0].content.parts[0].functionCall.name"},
		"no candidate": {`{"candidates":[]}`, "candidates"},
	} {
		var r genai.GenerateContentResponse
		if err := json.Unmarshal([]byte(c.body), &r); err != nil {
			t.Fatal(err)
		}
		_, err := remgenai.FromResponse(&r)
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != c.field {
			t.Errorf("%s: %v, want field %s", name, err, c.field)
		}
	}
	// A call without an id gets one that is never sent back.
	var r genai.GenerateContentResponse
	if err := json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}}}]}}]}`), &r); err != nil {
		t.Fatal(err)
	}
	m, err := remgenai.FromResponse(&r)
	if err != nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].ID == "" {
		t.Fatalf("%+v %v", m, err)
	}
	res, _ := remgenai.ToolResult(m.ToolCalls[0], map[string]any{"ok": true})
	_, contents, err := remgenai.Contents([]models.HistoryMessage{{Role: "user", Content: "q"}, m, res}, remgenai.Options{})
	if err != nil || contents[1].Parts[0].FunctionCall.ID != "" || contents[2].Parts[0].FunctionResponse.ID != "" {
		t.Fatalf("invented id sent: %+v %v", contents, err)
	}
}

// A call another writer stored (no genai item) goes to Gemini with the skip
// value Google documents; a call Gemini made unsigned goes back unsigned.
func TestSkipSignatureOnlyForCallsGeminiDidNotMake(t *testing.T) {
	foreign := models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "c1", Name: "f", Arguments: `{}`}}}
	var r genai.GenerateContentResponse
	if err := json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"f","args":{}}}]}}]}`), &r); err != nil {
		t.Fatal(err)
	}
	gemini, err := remgenai.FromResponse(&r)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		answer models.HistoryMessage
		sig    string
	}{"another writer's": {foreign, "skip_thought_signature_validator"}, "Gemini's": {gemini, ""}} {
		res := sdk.ToolResult(c.answer.ToolCalls[0], "ok")
		_, contents, err := remgenai.Contents([]models.HistoryMessage{{Role: "user", Content: "q"}, c.answer, res}, remgenai.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(contents[1].Parts[0].ThoughtSignature); got != c.sig {
			t.Errorf("%s call: signature %q, want %q", name, got, c.sig)
		}
	}
}

// A signed thought and a signed text, each streamed in pieces (the
// signature on the last piece, as Gemini streams it), are stored as the
// unstreamed answer's parts are.
func TestChunksAsTheAnswer(t *testing.T) {
	decode := func(s string) *genai.GenerateContentResponse {
		var r genai.GenerateContentResponse
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	whole := decode(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me think.","thought":true,"thoughtSignature":"c2lnMQ=="},{"text":"It is 4.","thoughtSignature":"c2lnMg=="},{"functionCall":{"id":"c1","name":"f","args":{"a":1}}}]}}],"modelVersion":"g","usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}`)
	chunk := func(part string) *genai.GenerateContentResponse {
		return decode(`{"candidates":[{"content":{"role":"model","parts":[` + part + `]}}],"modelVersion":"g","usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}`)
	}
	chunks := []*genai.GenerateContentResponse{chunk(`{"text":"Let me ","thought":true}`), chunk(`{"text":"think.","thought":true,"thoughtSignature":"c2lnMQ=="}`),
		chunk(`{"text":"It is "}`), chunk(`{"text":"4.","thoughtSignature":"c2lnMg=="}`), chunk(`{"functionCall":{"id":"c1","name":"f","args":{"a":1}}}`)}
	want, err := remgenai.FromResponse(whole)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remgenai.FromChunks(chunks)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := want.MarshalJSON()
	g, _ := got.MarshalJSON()
	if string(w) != string(g) {
		t.Fatalf("streamed %s\nwhole    %s", g, w)
	}
	if _, err := remgenai.FromChunks(nil); err == nil {
		t.Fatal("no chunk: no error")
	}
}

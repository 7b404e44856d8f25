package remanthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remanthropic"
)

func TestRefusesWhatItCannotKeep(t *testing.T) {
	for name, c := range map[string]struct{ body, field string }{
		"server tool":   {`{"content":[{"type":"text","text":"x"},{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}]}`, "content[1].type"},
		"input a list":  {`{"content":[{"type":"tool_use","id":"t1","name":"f","input":[1]}]}`, "content[0].input"},
		"no tool name":  {`{"content":[{"type":"tool_use","id":"t1","name":"","input":{}}]}`, "content[0].name"},
		"citations":     {`{"content":[{"type":"text","text":"x","citations":[{"type":"char_location","cited_text":"a","document_index":0,"start_char_index":0,"end_char_index":1}]}]}`, "content[0].citations"},
		"unknown block": {`{"content":[{"type":"hologram"}]}`, "content[0].type"},
	} {
		var m anthropic.Message
		if err := json.Unmarshal([]byte(c.body), &m); err != nil {
			t.Fatal(err)
		}
		_, err := remanthropic.FromMessage(&m)
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != c.field {
			t.Errorf("%s: %v, want field %s", name, err, c.field)
		}
	}
}

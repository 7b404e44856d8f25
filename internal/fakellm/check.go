package fakellm

import "fmt"

// Check holds a conversation to what the real APIs require of tool use: the
// message after an assistant message with calls answers every one of them
// and nothing else, and no result stands anywhere else. The fake servers
// answer 400 with its error, as the providers do.
func Check(msgs []Msg) error {
	for i, m := range msgs {
		if len(m.Results) == 0 {
			continue
		}
		if i == 0 || len(msgs[i-1].Calls) == 0 {
			return fmt.Errorf("message %d: tool results with no tool calls before them", i)
		}
		want := map[string]bool{}
		for _, c := range msgs[i-1].Calls {
			want[c.ID] = true
		}
		for _, r := range m.Results {
			if r.ID != "" && !want[r.ID] {
				return fmt.Errorf("message %d: result for %q, which the message before did not call", i, r.ID)
			}
			delete(want, r.ID)
		}
		if len(want) > 0 && m.Results[0].ID != "" {
			return fmt.Errorf("message %d: calls of message %d left unanswered: %v", i, i-1, want)
		}
	}
	for i, m := range msgs {
		if len(m.Calls) > 0 && (i+1 >= len(msgs) || len(msgs[i+1].Results) == 0) {
			return fmt.Errorf("message %d: tool calls not followed by their results", i)
		}
	}
	return nil
}

package remstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Attack v53att (1): bob stores at the public id of alice's name (UUIDv5 of
// user and name, which anyone can compute); alice's name then lives at its
// private id, but every guarded append by alice on her own name is refused
// as ErrMoved, so sdk.RunTurn can never store a second turn.
func TestAtt53SquattedPublicIDBreaksGuardedAppend(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	alice, err := remstore.Open(ctx, path, remstore.Options{UserID: "alice", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob, err := remstore.Open(ctx, path, remstore.Options{UserID: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	lib, _ := remstore.Sessions(alice)
	pub, _ := lib.SessionUUID("plan")
	if _, err := bob.Append(ctx, pub.String(), []models.HistoryMessage{{Role: models.RoleUser, Content: "squat"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Append(ctx, "plan", []models.HistoryMessage{{Role: models.RoleUser, Content: "mine"}}); err != nil {
		t.Fatal(err)
	}
	h, err := alice.Load(ctx, "plan")
	if err != nil || len(h.Messages) != 1 {
		t.Fatal(len(h.Messages), err)
	}
	_, err = alice.Append(ctx, "plan", []models.HistoryMessage{{Role: models.RoleUser, Content: "next"}}, remstore.AppendOptions{IfLast: h.Last})
	if err != nil {
		t.Errorf("alice's guarded append on her own name with her own Last: %v (errors.Is ErrMoved %v)", err, errors.Is(err, remstore.ErrMoved))
	}
}

// Attack v53att (2): turn A's first round (prompt, tool call, result) is
// stored; turn B starts after it and stores; A's second append is ErrMoved.
// A lost the race yet its half turn stays, and B's prompt sits between A's
// tool result and nothing: the loser stored something and the turns
// interleave (docs/go.md: "one stores and the other stores nothing at all").
func TestAtt53LoserOfLaterRoundLeavesHalfTurn(t *testing.T) {
	ctx := context.Background()
	st, err := remstore.Open(ctx, ":memory:", remstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	calls := 0
	askA := func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
		calls++
		if calls == 1 {
			return models.HistoryMessage{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "cA", Name: "t", Arguments: `{}`}}}, nil
		}
		// B's whole turn runs while A's model thinks about the tool result.
		if _, err := sdk.RunTurn(ctx, st, "s", "prompt B", func(context.Context, []models.HistoryMessage) (models.HistoryMessage, error) {
			return models.HistoryMessage{Role: models.RoleAssistant, Content: "answer B"}, nil
		}, nil); err != nil {
			t.Errorf("B: %v", err)
		}
		return models.HistoryMessage{Role: models.RoleAssistant, Content: "answer A"}, nil
	}
	tool := func(ctx context.Context, c models.ToolCall) (models.HistoryMessage, error) {
		return sdk.ToolResult(c, "r"), nil
	}
	_, errA := sdk.RunTurn(ctx, st, "s", "prompt A", askA, tool)
	h, _ := st.Load(ctx, "s")
	if errors.Is(errA, remstore.ErrMoved) && len(h.Messages) != 2 {
		var got []string
		for _, m := range h.Messages {
			got = append(got, string(m.Role)+":"+m.Content)
		}
		t.Errorf("A lost (ErrMoved) but the session holds %d messages %q; want B's 2 only", len(h.Messages), got)
	}
}

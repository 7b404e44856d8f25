package sessionstore_test

import (
	"context"
	"fmt"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// Store a turn, load it back cut to T = 10 code points either side of a
// REM LOOKUP hint, and recover the full text by its key; on SQLite's
// ":memory:", the store that needs no setup. The key's UUID is Python's
// uuid.uuid5(SessionNamespace, "alice\0chat-1"), computed there to check this.
func Example() {
	ctx := context.Background()
	db, _ := repository.Open(ctx, ":memory:")
	defer db.Close()
	_ = migrations.Up(ctx, db)
	st, _ := sessionstore.New(db, sessionstore.Options{UserID: "alice", TruncateLength: 10})

	_, _ = st.Store(ctx, "chat-1", []models.HistoryMessage{
		{Role: models.RoleUser, Content: "Tell me a story"},
		{Role: models.RoleAssistant, Content: "Once upon a time, in a land far away, there lived a gopher."},
	}, sessionstore.StoreOptions{})

	history, _ := st.Load(ctx, "chat-1", sessionstore.LoadOptions{})
	fmt.Printf("%q\n", history[1].Content)
	full, _ := st.Lookup(ctx, "REM LOOKUP "+history[1].EntityKey)
	fmt.Println(full)
	// Output:
	// "Once upon \n\n... [Message truncated - REM LOOKUP session-ee4c8c00-ba1d-5689-bd41-0ccba588c360-msg-1 to recover full content] ...\n\n a gopher."
	// Once upon a time, in a land far away, there lived a gopher.
}

// Expand restores every cut message of a loaded history (a reload for audit),
// and BestEffort is the store for callers that must not fail mid-stream: a
// failed load logs and returns an empty history, as the peer does.
func ExampleExpand() {
	ctx := context.Background()
	db, _ := repository.Open(ctx, ":memory:")
	defer db.Close()
	_ = migrations.Up(ctx, db)
	st, _ := sessionstore.New(db, sessionstore.Options{UserID: "alice", TruncateLength: 5})
	_, _ = st.Store(ctx, "chat-1", []models.HistoryMessage{{Role: models.RoleAssistant, Content: "a long answer, cut on load"}}, sessionstore.StoreOptions{})

	cut, _ := st.Load(ctx, "chat-1", sessionstore.LoadOptions{})
	full, _ := sessionstore.Expand(ctx, st, cut)
	fmt.Println(cut[0].Compressed, full[0].Compressed, full[0].Content)

	be := sessionstore.BestEffort{Store: st}
	fmt.Println(len(be.Load(ctx, "", sessionstore.LoadOptions{}))) // an empty key fails: logged, []
	// Output:
	// true false a long answer, cut on load
	// 0
}

package client_test

import (
	"context"
	"testing"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
)

// Attack v53att (3): the agent store builds /v1/sessions/<name>/messages
// with url.PathEscape, which leaves "" and "." as they are; serve's mux
// answers the unclean path with a 307 to /v1/sessions/messages, which the
// Go client follows with the same method: Clear("") and Clear(".") delete
// the caller's session named "messages" (DELETE /v1/sessions/{id}), and
// the error is no sentinel. The embedded store refuses "" (ErrBadRequest)
// and stores "." as a name.
func TestAtt53ClearOddNameDeletesOtherSession(t *testing.T) {
	ctx := context.Background()
	c := agenttest.NewServeClient(t, dbtest.NewSQLite(t), 0)
	st := c.Agent()
	for _, name := range []string{"", "."} {
		if _, err := st.Append(ctx, "messages", []models.HistoryMessage{{Role: models.RoleUser, Content: "keep"}}); err != nil {
			t.Fatal(err)
		}
		_, cerr := st.Clear(ctx, name)
		if _, err := c.GetSession(ctx, "messages", client.GetOptions{}); err != nil {
			t.Errorf("Clear(%q) (error %v): session \"messages\" is gone: %v", name, cerr, err)
		}
	}
}

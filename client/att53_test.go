package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
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

// The same bad input is ErrBadRequest through the client as on the
// embedded store, caught before sending or by serve: an empty session
// name, a guard with a NUL, a negative LastN, a body over serve's limit.
func TestClientBadInputIsBadRequest(t *testing.T) {
	ctx := context.Background()
	c := agenttest.NewServeClient(t, dbtest.NewSQLite(t), 0)
	st := c.Agent()
	msg := []models.HistoryMessage{{Role: models.RoleUser, Content: "x"}}
	cases := map[string]func() error{
		"empty session":  func() error { _, err := st.Append(ctx, "", msg); return err },
		"NUL in IfLast":  func() error { _, err := st.Append(ctx, "s", msg, sdk.AppendOptions{IfLast: "a\x00b"}); return err },
		"negative LastN": func() error { _, err := st.Load(ctx, "s", sdk.LoadOptions{LastN: -1}); return err },
		"body over the limit": func() error {
			_, err := st.Append(ctx, "s", []models.HistoryMessage{{Role: models.RoleUser, Content: strings.Repeat("x", 40<<20)}})
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, sdk.ErrBadRequest) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

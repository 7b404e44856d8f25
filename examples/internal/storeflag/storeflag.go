// Package storeflag is the examples' shared start: the flags that choose
// where a session lives (serve through the Go client, or the library on a
// database) and the sdk.Store they open.
package storeflag

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/settings"
)

// Flags are the examples' common flags.
type Flags struct {
	Serve, APIKey, DB, User, Session, System *string
}

// Register adds the common flags to the default flag set.
func Register() Flags {
	return Flags{
		Serve:   flag.String("serve", "", "remstore serve's URL; empty: the library on -db"),
		APIKey:  flag.String("api-key", "", "serve's API key"),
		DB:      flag.String("db", settings.DefaultSQLitePath(), "the database, without -serve"),
		User:    flag.String("user", "alice", "the user whose session it is"),
		Session: flag.String("session", "chat-1", "the session key"),
		System:  flag.String("system", "You are a travel agent. Use get_weather for weather.", "the system prompt"),
	}
}

// Open returns the store the flags name.
func (f Flags) Open(ctx context.Context) (sdk.Store, error) {
	dsn := *f.DB
	if *f.Serve != "" {
		dsn = *f.Serve
	}
	return remstore.Open(ctx, dsn, remstore.Options{UserID: *f.User, APIKey: *f.APIKey, Migrate: true})
}

// WeatherSchema is the JSON Schema of the examples' get_weather tool.
var WeatherSchema = map[string]any{"type": "object", "required": []string{"city"},
	"properties": map[string]any{"city": map[string]any{"type": "string"}}}

// Fail prints err for the named program and exits 1.
func Fail(program string, err error) {
	fmt.Fprintln(os.Stderr, program+":", err)
	os.Exit(1)
}

// WeatherTool runs get_weather (any call that is not rem_lookup) for
// sdk.RunTurn.
func WeatherTool(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
	return sdk.ToolResult(c, Weather(c.Arguments)), nil
}

// Weather is the examples' tool: a fixed forecast for the city asked.
func Weather(arguments string) string {
	var a struct {
		City string `json:"city"`
	}
	_ = json.Unmarshal([]byte(arguments), &a)
	b, _ := json.Marshal(map[string]any{"city": a.City, "celsius": 21, "sky": "clear"})
	return string(b)
}

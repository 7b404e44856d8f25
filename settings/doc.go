// Package settings resolves remstore's configuration into one [Config]:
// flag > environment > .env file > default, recording where each value came from.
// [Config.Validate] rejects bad values with an error naming the setting.
//
//	cfg, err := settings.Load(settings.Options{Flags: map[string]string{settings.KeyDB: "/tmp/x.db"}})
//
// The .env file is the nearest one in the working directory or up to four of
// its parents. The Python service lets .env override the environment; remstore
// follows the Go convention (the environment wins). The two differ only when
// both set the same variable to different values.
package settings

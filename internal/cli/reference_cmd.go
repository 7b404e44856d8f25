package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/settings"
)

// newReferenceCmd prints docs/reference.md. It is hidden: the page is
// generated from the code that reads the settings, defines the flags and
// serves the routes, so it cannot drift (TestReferenceIsCurrent).
func newReferenceCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:    "reference",
		Short:  "Print the reference page (docs/reference.md) generated from the code",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeReference(cmd.OutOrStdout(), root)
		},
	}
}

func writeReference(w io.Writer, root *cobra.Command) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("# Reference\n\n")
	p("Generated from the code by `remstore reference` (`go test ./internal/cli -run TestReferenceIsCurrent -update`\n")
	p("rewrites it; the test fails when it is stale). What the words mean: [concepts.md](concepts.md).\n\n")
	p("- [Environment variables](#environment-variables)\n- [Exit codes](#exit-codes)\n- [Message keys](#message-keys)\n- [Commands](#commands)\n- [HTTP API](#http-api)\n\n")

	p("## Environment variables\n\n")
	p("Each is also read from a `.env` file (the nearest in the working directory or up to four parents);\n")
	p("a flag beats the environment, which beats `.env`, which beats the default. `remstore env` prints\n")
	p("the value in effect and where it came from. A `REMSTORE_` name in `.env` that is not listed here is\n")
	p("warned about.\n\n")
	p("| variable | read by | default | meaning |\n|---|---|---|---|\n")
	for _, v := range settings.Variables() {
		p("| `%s` | %s | %s | %s |\n", v.Name, v.ReadBy, cell(v.Default), cell(v.Meaning))
	}

	p("\n## Exit codes\n\n| code | meaning |\n|---|---|\n")
	for _, c := range []struct {
		code int
		what string
	}{
		{ExitOK, "done"},
		{ExitNotFound, "not found: the session, message or key does not exist for this user"},
		{ExitUsage, "usage or bad input (the message names the flag or field), or a session's state refuses (not active, moved on under `--expect-last`)"},
		{ExitUnavailable, "storage unavailable: cannot connect, timed out, storage switched off where it must read, or the database is not migrated (`remstore migrate up`)"},
	} {
		p("| %d | %s |\n", c.code, c.what)
	}

	p("\n## Message keys\n\n")
	p("The keys a store accepts in a history message (the Python service's keys and the extras a full load prints, so a\n")
	p("`--extras` load stores back); any other key is refused naming it, with the nearest one suggested.\n")
	p("A value the row would not keep (a tool field off a `tool` row, say) is refused too.\n\n")
	p("| key | where a stored row keeps it |\n|---|---|\n")
	for _, k := range msgcheck.MessageKeys() {
		p("| `%s` | %s |\n", k.Name, cell(k.Keeps))
	}

	p("\n## Commands\n\n")
	p("Global flags, accepted by every command:\n\n")
	flagTable(p, root.PersistentFlags())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || !sub.IsAvailableCommand() {
				continue
			}
			p("\n### %s\n\n%s.\n\n```\n%s\n```\n", sub.CommandPath(), strings.TrimSuffix(sub.Short, "."), sub.UseLine())
			if sub.HasAvailableLocalFlags() {
				p("\n")
				flagTable(p, sub.LocalNonPersistentFlags())
			}
			walk(sub)
		}
	}
	walk(root)

	p("\n## HTTP API\n\n")
	p("`remstore serve` answers these routes (the machine-readable form is `GET /openapi.json`). Every `/v1`\n")
	p("route needs `Authorization: Bearer <key>` and acts for the user in `X-User-Id`; errors are\n")
	p("`{\"error\": {\"code\", \"message\", \"field\"}}`. A query parameter is given at most once: a repeated\n")
	p("one (`?last=2&last=3`) is a 400 whose field names it, and so is a repeated `Authorization`, `X-User-Id`,\n")
	p("`X-Session-Id`, `Idempotency-Key` or `X-Remstore-Expect-Last` header.\n\n")
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]param `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI, &doc); err != nil {
		return fmt.Errorf("openapi.json: %w", err)
	}
	p("| method | path | what | parameters |\n|---|---|---|---|\n")
	for _, route := range httpapi.Routes() {
		method, path, _ := strings.Cut(route, " ")
		var op struct {
			Summary    string  `json:"summary"`
			Parameters []param `json:"parameters"`
		}
		if raw, ok := doc.Paths[path][strings.ToLower(method)]; ok {
			if err := json.Unmarshal(raw, &op); err != nil {
				return fmt.Errorf("openapi.json %s: %w", route, err)
			}
		}
		var names []string
		for _, prm := range op.Parameters {
			if ref, ok := strings.CutPrefix(prm.Ref, "#/components/parameters/"); ok {
				prm = doc.Components.Parameters[ref]
			}
			switch prm.In {
			case "query":
				names = append(names, "`?"+prm.Name+"`")
			case "header":
				names = append(names, "`"+prm.Name+"`")
			}
		}
		p("| %s | `%s` | %s | %s |\n", method, path, cell(op.Summary), strings.Join(names, ", "))
	}
	var headers []string
	for _, prm := range doc.Components.Parameters {
		if prm.In == "header" {
			headers = append(headers, fmt.Sprintf("| `%s` | %s |", prm.Name, cell(prm.Description)))
		}
	}
	sort.Strings(headers)
	p("\nRequest headers:\n\n| header | meaning |\n|---|---|\n%s\n", strings.Join(headers, "\n"))
	return nil
}

type param struct {
	Ref         string `json:"$ref"`
	Name        string `json:"name"`
	In          string `json:"in"`
	Description string `json:"description"`
}

func flagTable(p func(string, ...any), fs *pflag.FlagSet) {
	p("| flag | default | meaning |\n|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		if t := f.Value.Type(); t != "bool" {
			name += " " + t
		}
		def := f.DefValue
		if def == "" || def == "[]" || def == "false" || def == "0" {
			def = ""
		} else {
			def = "`" + def + "`"
		}
		p("| `%s` | %s | %s |\n", name, def, cell(f.Usage))
	})
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

package repository

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Named is a statement written with named parameters (@name), for the
// statements with more than a handful of arguments: its arguments come from
// the fields of one params struct P (tag `sql:"name"`), so no two of them
// can be swapped by position. It is rendered once, for bun and database/sql
// (? in order, a name repeated as often as the text names it) and for pgx
// ($n, one number per name). A name P does not have is a defect of the
// program, found when the statement is made (at package init).
//
// '@' followed by a letter is a parameter; PostgreSQL's @ operators (@>,
// <@, @@, @-) are followed by something else, and the texts this is used on
// quote no '@'.
type Named[P any] struct {
	bun, pg  string
	bunField []int // P's field per ? of bun, in order
	pgField  []int // P's field per $n of pg
}

// NewNamed renders text for P. It panics when text names a parameter P does
// not have, or P has a tagged field text does not name and the tag does not
// say `sql:"name,optional"` (both are mistakes in the program, not in its
// input: a tenant never bound is a leak).
func NewNamed[P any](text string) Named[P] {
	t := reflect.TypeFor[P]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("repository.NewNamed: %s is not a struct", t))
	}
	fields, optional := map[string]int{}, map[string]bool{}
	for i := range t.NumField() {
		name, opt, _ := strings.Cut(t.Field(i).Tag.Get("sql"), ",")
		if name != "" {
			fields[name], optional[name] = i, opt == "optional"
		}
	}
	var n Named[P]
	var bun, pg strings.Builder
	number := map[string]int{}
	used := map[string]bool{}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '@' || i+1 >= len(text) || !isNameStart(text[i+1]) {
			bun.WriteByte(c)
			pg.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(text) && isNamePart(text[j]) {
			j++
		}
		name := text[i+1 : j]
		f, ok := fields[name]
		if !ok {
			panic(fmt.Sprintf("repository.NewNamed: %s has no field tagged sql:%q", t, name))
		}
		used[name] = true
		bun.WriteByte('?')
		n.bunField = append(n.bunField, f)
		k, seen := number[name]
		if !seen {
			n.pgField = append(n.pgField, f)
			k = len(n.pgField)
			number[name] = k
		}
		pg.WriteString("$" + strconv.Itoa(k))
		i = j - 1
	}
	for name := range fields {
		if !used[name] && !optional[name] {
			panic(fmt.Sprintf("repository.NewNamed: the statement does not name %s's parameter %q", t, name))
		}
	}
	n.bun, n.pg = bun.String(), pg.String()
	return n
}

func isNameStart(c byte) bool { return c >= 'a' && c <= 'z' || c == '_' }
func isNamePart(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// Bun is the text with ? placeholders, for bun and database/sql.
func (n Named[P]) Bun() string { return n.bun }

// PG is the text with $n placeholders, for pgx.
func (n Named[P]) PG() string { return n.pg }

// BunArgs are p's values in the order of Bun's placeholders.
func (n Named[P]) BunArgs(p *P) []any { return pick(p, n.bunField) }

// PGArgs are p's values in the order of PG's numbers.
func (n Named[P]) PGArgs(p *P) []any { return pick(p, n.pgField) }

func pick[P any](p *P, fields []int) []any {
	v := reflect.ValueOf(p).Elem()
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = v.Field(f).Interface()
	}
	return out
}

package repository_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/remstore/remstore/repository"
)

type namedParams struct {
	Sid    string `sql:"sid"`
	Tenant string `sql:"tenant"`
	N      int    `sql:"n,optional"`
}

func TestNamedRendersBothForms(t *testing.T) {
	st := repository.NewNamed[namedParams](`SELECT 1 FROM m WHERE sid = @sid AND tenant = @tenant AND x @> '{}' AND again = @sid`)
	if got, want := st.Bun(), `SELECT 1 FROM m WHERE sid = ? AND tenant = ? AND x @> '{}' AND again = ?`; got != want {
		t.Fatalf("bun text %q, want %q", got, want)
	}
	if got, want := st.PG(), `SELECT 1 FROM m WHERE sid = $1 AND tenant = $2 AND x @> '{}' AND again = $1`; got != want {
		t.Fatalf("pg text %q, want %q", got, want)
	}
	p := namedParams{Sid: "s", Tenant: "alice"}
	if got := st.BunArgs(&p); !reflect.DeepEqual(got, []any{"s", "alice", "s"}) {
		t.Fatalf("bun args %v", got)
	}
	if got := st.PGArgs(&p); !reflect.DeepEqual(got, []any{"s", "alice"}) {
		t.Fatalf("pg args %v", got)
	}
}

func TestNamedRefusesMistakes(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"a name the struct lacks", `SELECT @sid, @tennant`, `tagged sql:"tennant"`},
		{"a field never bound", `SELECT @sid`, `does not name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Fatalf("panic %v, want one saying %q", r, tc.want)
				}
			}()
			repository.NewNamed[namedParams](tc.text)
		})
	}
}

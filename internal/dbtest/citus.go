package dbtest

import (
	"context"
	"os"
	"testing"

	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/citus"
)

// EnvCitusURL names the coordinator of a Citus cluster (scripts/citus.sh);
// EnvRequireCitus=1 makes its absence a failure (CI sets it). Citus tests
// share the cluster, each in a schema of its own with 4 shards per table,
// few enough to create in a moment, more than the 2 workers.
const (
	EnvCitusURL     = "REMSTORE_TEST_CITUS_URL"
	EnvRequireCitus = "REMSTORE_REQUIRE_CITUS"
	CitusTestShards = 4
)

// CitusURL returns the coordinator URL, or skips (fails under
// EnvRequireCitus=1).
func CitusURL(t testing.TB) string {
	t.Helper()
	return serverURL(t, EnvCitusURL, EnvRequireCitus, "Citus")
}

// HaveCitus reports whether a Citus cluster is configured; a test that
// runs on several databases uses it to leave only Citus out, and fails
// instead under EnvRequireCitus=1.
func HaveCitus(t testing.TB) bool {
	t.Helper()
	if os.Getenv(EnvCitusURL) != "" {
		return true
	}
	if os.Getenv(EnvRequireCitus) == "1" {
		t.Fatalf("%s is not set and %s=1: Citus tests must run (use `make test`)", EnvCitusURL, EnvRequireCitus)
	}
	t.Logf("%s not set: the Citus writer is left out (run `make test` to start a cluster)", EnvCitusURL)
	return false
}

// NewCitusRawURL returns an empty schema on the Citus coordinator.
func NewCitusRawURL(t testing.TB) string { t.Helper(); return newSchemaURL(t, CitusURL(t)) }

// NewCitusURL returns a schema on the Citus coordinator, migrated and
// distributed by remstore citus distribute's code.
func NewCitusURL(t testing.TB) string {
	t.Helper()
	u := NewCitusRawURL(t)
	db := migrated(t, u)
	if _, err := citus.Distribute(context.Background(), db, citus.DistributeOptions{ShardCount: CitusTestShards}); err != nil {
		t.Fatalf("distribute: %v", err)
	}
	return u
}

// NewCitus returns a migrated, distributed database on the Citus cluster.
func NewCitus(t testing.TB) *repository.DB { t.Helper(); return OpenRaw(t, NewCitusURL(t)) }

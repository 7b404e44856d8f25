// Package bench holds remstore's performance workloads, each beside its floor:
// the same work in native pgx with hand-written SQL. `go test -bench` and
// `remstore bench` run the same definitions, so the figures cannot drift apart.
package bench

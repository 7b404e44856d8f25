// Package citus administers remstore's tables on a Citus cluster: it
// distributes sessions and messages by session (co-located, with the store
// function delegated to the session's worker), undistributes them, and
// reports their state (remstore citus distribute|undistribute|status).
package citus

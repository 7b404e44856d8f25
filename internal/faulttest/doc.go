// Package faulttest runs a PostgreSQL cluster of its own for tests that stop
// and start the server (crash tests must not take down the shared one).
package faulttest

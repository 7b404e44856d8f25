// Package jsonvalid says whether bytes are one JSON value, as json.Valid
// does, in one pass without encoding/json's state machine: the check a
// pydantic-ai load runs on every stored source (issue 45).
package jsonvalid

// Package mcpserver offers REM LOOKUP and session history as Model Context
// Protocol tools, so an agent can recover cut text itself: rem_lookup(key) and
// session_history(session_id, compress, offset, limit), a page of the history
// at a time. `remstore mcp` serves it on stdio.
package mcpserver

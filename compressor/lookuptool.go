package compressor

// The REM LOOKUP tool as every surface offers it to a model (the MCP server,
// the model SDK adapters under sdk/): one name and one description.
const (
	LookupToolName        = "rem_lookup"
	LookupToolDescription = "Recover the full text of a message that was truncated with " +
		"'[Message truncated - REM LOOKUP <key> to recover full content]'. Pass the key."
)

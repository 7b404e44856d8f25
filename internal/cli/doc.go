// Package cli is the remstore command line: one cobra command per subcommand,
// each reading injected stdin/stdout/stderr so tests run it in-process.
// [Run] returns the exit code: 0 ok, 1 not found, 2 usage or bad input,
// 3 storage unavailable. Errors are one line on stderr.
package cli

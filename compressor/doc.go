// Package compressor cuts long messages to their first and last T code points
// with a REM LOOKUP hint, byte for byte as the Python service does, and
// builds and parses the lookup keys. It is pure: no database, no I/O.
//
//	c, _ := compressor.New(200)
//	short, _ := c.Compress(msg, compressor.BuildKey(sessionID, 7))
//	key, _ := compressor.ParseKey("REM LOOKUP " + short.EntityKey)
//
// Lengths count Unicode code points (Python's len), never bytes; input that is
// not valid UTF-8 is an error ([ErrInvalidUTF8]), never a mangled cut.
package compressor

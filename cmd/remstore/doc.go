// Command remstore stores agent conversations and rebuilds them as model
// history; see `remstore --help` and the README.
package main

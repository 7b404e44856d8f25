//go:build !unix

package migrations

// tryFileLock takes no lock where flock does not exist (no release is
// built for such a system): processes migrating one SQLite file at once
// there are kept apart only by SQLite's own write lock.
func tryFileLock(string) (unlock func(), busy bool, err error) {
	return func() {}, false, nil
}

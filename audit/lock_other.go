//go:build !unix

package audit

import (
	"errors"
	"os"
	"time"
)

// tryLock uses an O_EXCL lock file where flock does not exist; a lock older
// than a minute is taken to be left by a dead process.
func tryLock(path string) (unlock func(), busy bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		_ = f.Close()
		return func() { _ = os.Remove(path) }, false, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return nil, false, err
	}
	if st, serr := os.Stat(path); serr == nil && time.Since(st.ModTime()) > time.Minute {
		_ = os.Remove(path)
		return tryLock(path)
	}
	return nil, true, nil
}

// openNoFollow opens path for reading; without O_NOFOLLOW it refuses a path
// that Lstat reports as a symlink.
func openNoFollow(path string) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New(path + " is a symlink; refusing to follow it")
	}
	return os.Open(path)
}

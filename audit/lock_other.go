//go:build !unix

package audit

import (
	"context"
	"errors"
	"os"
	"time"
)

// lockFile uses an O_EXCL lock file where flock does not exist; a lock older
// than a minute is taken to be left by a dead process.
func lockFile(ctx context.Context, path string) (func(), error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if st, serr := os.Stat(path); serr == nil && time.Since(st.ModTime()) > time.Minute {
			_ = os.Remove(path)
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().After(deadline) {
			return nil, errors.New("audit lock: timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openNoFollow opens path for reading; without O_NOFOLLOW it refuses a path
// that Lstat reports as a symlink.
func openNoFollow(path string) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New(path + " is a symlink; refusing to follow it")
	}
	return os.Open(path)
}

//go:build !unix

package audit

import (
	"context"
	"errors"
	"fmt"
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

// fileLock polls tryLock until it has the lock or ctx ends; on an error it
// calls done.
func fileLock(ctx context.Context, path string, done func()) (func(), error) {
	unlock, err := pollLock(ctx, path)
	if err != nil {
		done()
	}
	return unlock, err
}

// openNoFollow opens path for reading; without O_NOFOLLOW it refuses a path
// that Lstat reports as a symlink.
func openNoFollow(path string) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New(path + " is a symlink; refusing to follow it")
	}
	return os.Open(path)
}

// pollLock tries the cross-process lock until it is had or ctx ends, the
// pause between tries doubling from 1 ms to 50 ms.
func pollLock(ctx context.Context, path string) (func(), error) {
	pause := time.Millisecond
	for {
		unlock, busy, err := tryLock(path)
		if err != nil {
			return nil, err
		}
		if !busy {
			return unlock, nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

//go:build unix

package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileLock takes an exclusive flock on path (created 0600 if needed, never
// through a symlink), waiting as long as ctx allows; it is released by the
// returned function or when the process dies. On an error it calls done,
// at once or, when ctx ended first, once the abandoned flock returns (and
// is let go).
func fileLock(ctx context.Context, path string, done func()) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		done()
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink; refusing to follow it", path)
		}
		return nil, err
	}
	res := make(chan error, 1)
	go func() {
		var err error
		for {
			if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != syscall.EINTR {
				break
			}
		}
		res <- err
	}()
	select {
	case err := <-res:
		if err != nil {
			_ = f.Close()
			done()
			return nil, err
		}
		return func() {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			_ = f.Close()
		}, nil
	case <-ctx.Done():
		go func() {
			if <-res == nil {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			}
			_ = f.Close()
			done()
		}()
		return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
	}
}

// openNoFollow opens path for reading, refusing a symlink.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink; refusing to follow it", path)
	}
	return f, err
}

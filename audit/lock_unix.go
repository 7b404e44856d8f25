//go:build unix

package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created 0600 if needed, never
// through a symlink), waiting no longer than ctx allows; it is released by
// the returned function or when the process dies.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink; refusing to follow it", path)
		}
		return nil, err
	}
	// A blocking flock queues fairly behind the other waiters, but cannot be
	// cancelled; it runs in a goroutine, and when ctx ends first we stop
	// waiting for it and release the lock whenever it is granted after all.
	done := make(chan error, 1)
	go func() {
		var err error
		for {
			if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != syscall.EINTR {
				break
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			_ = f.Close()
			return nil, err
		}
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			}
			_ = f.Close()
		}()
		return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// openNoFollow opens path for reading, refusing a symlink.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink; refusing to follow it", path)
	}
	return f, err
}

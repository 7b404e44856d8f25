//go:build unix

package audit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"time"
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
	// Polling (a blocking flock cannot be cancelled); short, jittered waits
	// so that ten processes appending at once all get their turn.
	for wait := time.Millisecond; ; wait = min(2*wait, 8*time.Millisecond) {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			_ = f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(wait + time.Duration(rand.Int64N(int64(wait)))):
		}
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

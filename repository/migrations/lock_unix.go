//go:build unix

package migrations

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryFileLock tries once for an exclusive flock on path (created if
// missing, never through a symlink): busy when another process holds it.
// The kernel lets it go when this process dies; the file stays.
func tryFileLock(path string) (unlock func(), busy bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, false, fmt.Errorf("%s is a symlink; refusing to follow it", path)
		}
		return nil, false, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, true, nil
		}
		return nil, false, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, false, nil
}

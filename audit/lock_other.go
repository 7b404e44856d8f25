//go:build !unix

package audit

import (
	"errors"
	"os"
	"time"
)

// lockFile uses an O_EXCL lock file where flock does not exist; a lock older
// than a minute is taken to be left by a dead process.
func lockFile(path string) (func(), error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
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
		if time.Now().After(deadline) {
			return nil, errors.New("audit lock: timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

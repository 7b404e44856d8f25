package audit

import (
	"context"
	"fmt"
	"sync"
)

// A dump's lock is taken in two steps. In this process, one goroutine per
// file at a time (fileMutex): the others wait on a channel, which a context
// can abandon at no cost. Across processes, that one goroutine takes the
// file lock (fileLock): on Unix a blocking flock, which queues fairly behind
// other processes but cannot be cancelled, so a wait that gives up leaves it
// to finish in the background, still holding the file's turn here; at most
// one thread per file is ever blocked. Before, every abandoned wait kept its
// own thread: 64 clients timing out against another process's lock grew
// 9,606 threads.

type fileMutex struct {
	ch   chan struct{} // holds a token while the file is locked here
	refs int           // goroutines holding or waiting; the entry goes at 0
}

var (
	mutexesMu sync.Mutex
	mutexes   = map[string]*fileMutex{}
)

// lockPath locks path for this process and then for every process, waiting
// no longer than ctx allows. Whatever it took is given back when it fails.
func lockPath(ctx context.Context, path string) (func(), error) {
	mutexesMu.Lock()
	m := mutexes[path]
	if m == nil {
		m = &fileMutex{ch: make(chan struct{}, 1)}
		mutexes[path] = m
	}
	m.refs++
	mutexesMu.Unlock()
	leave := func() {
		mutexesMu.Lock()
		if m.refs--; m.refs == 0 {
			delete(mutexes, path)
		}
		mutexesMu.Unlock()
	}
	select {
	case m.ch <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
	}
	done := func() {
		<-m.ch
		leave()
	}
	unlockFile, err := fileLock(ctx, path, done)
	if err != nil {
		return nil, err // fileLock calls done, now or when its wait ends
	}
	return func() {
		unlockFile()
		done()
	}, nil
}

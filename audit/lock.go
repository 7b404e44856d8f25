package audit

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A dump's lock is taken in two steps. In this process, one goroutine per
// file at a time (fileMutex): the others wait on a channel, which a context
// can abandon at no cost. Across processes, that one goroutine polls a
// non-blocking file lock (tryLock) with a growing pause: a blocked flock
// would hold an OS thread that no context can take back, and 64 clients
// timing out against another process's lock once grew 9,606 threads.

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
	unlockFile, err := pollLock(ctx, path)
	if err != nil {
		<-m.ch
		leave()
		return nil, err
	}
	return func() {
		unlockFile()
		<-m.ch
		leave()
	}, nil
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

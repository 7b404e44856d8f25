// Package memtest measures what a call adds to the Go heap, for the tests
// that hold memory flat in the size of a session (httpapi, viewer): one
// sampler, so that their figures are taken the same way.
package memtest

import (
	"runtime"
	"time"
)

// PeakHeap is the most heap fn's run added above the heap before it,
// sampled every millisecond (after a GC, so garbage from earlier does not
// count).
func PeakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, top := ms.HeapAlloc, ms.HeapAlloc
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapAlloc)
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	runtime.ReadMemStats(&ms)
	return max(top, ms.HeapAlloc) - base
}

package audit

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Big dumps are parsed a few at a time, process-wide: one tenant's loads of
// 20 dumps of 31 MiB at once took serve to 3.5 GB. An append that finds
// every big parse taken sets its invocation aside once its context ends,
// and the next append takes it in.
func TestBigDumpParsesAreBounded(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	big := strings.Repeat("x", bigDump+1)
	if err := Append(ctx, dir, "big", Invocation{Prompt: big}); err != nil {
		t.Fatal(err)
	}
	for range maxBigParses { // every big parse taken
		bigParses <- struct{}{}
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	start := time.Now()
	err := Append(short, dir, "big", Invocation{Prompt: "second"})
	cancel()
	if err != nil || time.Since(start) > 5*time.Second {
		t.Fatalf("append behind the taken parses: %v after %s", err, time.Since(start))
	}
	if n := len(pendingFiles(Path(dir, "big"))); n != 1 {
		t.Fatalf("%d invocations set aside, want 1", n)
	}
	// A small dump is not held up.
	if err := Append(short, dir, "small", Invocation{Prompt: "s"}); err != nil {
		t.Fatalf("a small dump's append: %v", err)
	}
	for range maxBigParses {
		<-bigParses
	}
	if err := Append(ctx, dir, "big", Invocation{Prompt: "third"}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(dir, "big")
	if err != nil || len(f.Invocations) != 3 {
		t.Fatalf("after the parses were free: %v, %d invocations", err, len(f.Invocations))
	}
}

// One reader's big parses (serve: one API key or user, WithReader) take
// one of the maxBigParses at a time, so another's parse is not queued
// behind them: before, a tenant's 8 viewer pages of its own 30 MB dump at
// once took another's audit page of a 2.6 MB dump from 0.03 s to 5 s.
func TestBigParsesShareAcrossReaders(t *testing.T) {
	ctx := context.Background()
	bob := WithReader(ctx, "bob")
	release, err := parseGate(bob, bigDump+1)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	short, cancel := context.WithTimeout(bob, 100*time.Millisecond)
	defer cancel()
	if second, err := parseGate(short, bigDump+1); err == nil {
		defer second()
		t.Errorf("bob's second big parse at once was admitted: it waits for his first")
	}
	alice, cancel := context.WithTimeout(WithReader(ctx, "alice"), time.Second)
	defer cancel()
	start := time.Now()
	theirs, err := parseGate(alice, bigDump+1)
	if err != nil {
		t.Fatalf("alice's big parse beside bob's: %v after %s", err, time.Since(start))
	}
	theirs()
	// A caller naming no reader (the CLI, the library) is bounded by the
	// process-wide bound alone.
	anon, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	r1, err := parseGate(anon, bigDump+1)
	if err != nil {
		t.Fatal(err)
	}
	r1()
}

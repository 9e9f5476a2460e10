package inprocess_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/backendtest"
	"github.com/troupe-dev/troupe/backend/inprocess"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return inprocess.New() }, backendtest.Hooks{
		KillExternally: func(t *testing.T, h backend.Handle, tm *backendtest.Teammate) { tm.Crash() },
		ExitStatus:     true,
	})
}

func TestIdentityInRunContext(t *testing.T) {
	b := inprocess.New()
	t.Cleanup(func() { b.Close(context.Background()) })
	type key struct{}
	got := make(chan inprocess.Identity, 1)
	vals := make(chan any, 1)
	ctx := context.WithValue(t.Context(), key{}, "kept")
	h, err := b.Spawn(ctx, backend.Spec{
		AgentID: "helper@team-a", Name: "helper", Team: "team-a", Color: "blue",
		Run: func(ctx context.Context) error {
			id, ok := inprocess.IdentityFrom(ctx)
			if !ok {
				return errors.New("no identity in ctx")
			}
			got <- id
			vals <- ctx.Value(key{})
			return nil
		},
	})
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	backendtest.WaitDone(t, h, "run")
	if err := h.Err(); err != nil {
		t.Fatalf("Err = %v; want nil", err)
	}
	want := inprocess.Identity{AgentID: "helper@team-a", Name: "helper", Team: "team-a", Color: "blue"}
	if id := <-got; id != want {
		t.Errorf("IdentityFrom(run ctx) = %+v; want %+v", id, want)
	}
	if v := <-vals; v != "kept" {
		t.Errorf("run ctx value = %v; want the spawn ctx's value %q", v, "kept")
	}
	if _, ok := inprocess.IdentityFrom(context.Background()); ok {
		t.Error("IdentityFrom(Background) reports an identity")
	}
}

// The teammate outlives the ctx it was spawned with: only Kill ends it.
func TestSpawnContextDoesNotCancelRun(t *testing.T) {
	b := inprocess.New()
	t.Cleanup(func() { b.Close(context.Background()) })
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	h, err := b.Spawn(ctx, backend.Spec{AgentID: "a@t", Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return context.Cause(ctx)
	}})
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	<-started
	cancel()
	select {
	case <-h.Done():
		t.Fatalf("teammate ended when its spawn ctx was cancelled: %v", h.Err())
	default:
	}
	if err := h.Kill(t.Context()); err != nil {
		t.Fatalf("Kill = %v", err)
	}
	if !errors.Is(h.Err(), backend.ErrKilled) {
		t.Errorf("Err = %v; want ErrKilled", h.Err())
	}
}

func TestPanicRecovered(t *testing.T) {
	b := inprocess.New()
	t.Cleanup(func() { b.Close(context.Background()) })
	h, err := b.Spawn(t.Context(), backend.Spec{AgentID: "p@t", Run: func(context.Context) error { panic("boom") }})
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	backendtest.WaitDone(t, h, "panic")
	var pe *inprocess.PanicError
	if !errors.As(h.Err(), &pe) {
		t.Fatalf("Err = %v; want a *PanicError", h.Err())
	}
	if pe.Value != "boom" || !strings.Contains(string(pe.Stack), "TestPanicRecovered") {
		t.Errorf("PanicError = %v with stack %q; want value boom and the Run's stack", pe.Value, pe.Stack)
	}
	// The id is free again.
	h2, err := b.Spawn(t.Context(), backend.Spec{AgentID: "p@t", Run: func(context.Context) error { return nil }})
	if err != nil {
		t.Fatalf("Spawn after a panic = %v", err)
	}
	backendtest.WaitDone(t, h2, "respawn")
}

// Kill of a Run that returns its own error keeps that error beside ErrKilled.
func TestKillKeepsRunError(t *testing.T) {
	b := inprocess.New()
	t.Cleanup(func() { b.Close(context.Background()) })
	errFlush := errors.New("flush failed")
	started := make(chan struct{})
	h, err := b.Spawn(t.Context(), backend.Spec{AgentID: "k@t", Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return errFlush
	}})
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	<-started
	if err := h.Kill(t.Context()); err != nil {
		t.Fatalf("Kill = %v", err)
	}
	if err := h.Err(); !errors.Is(err, backend.ErrKilled) || !errors.Is(err, errFlush) {
		t.Errorf("Err = %v; want ErrKilled and the Run's error", err)
	}
}

// A Run that ignores its ctx makes Kill and Close give up with ctx.
func TestKillBoundedByContext(t *testing.T) {
	b := inprocess.New()
	release := make(chan struct{})
	h, err := b.Spawn(t.Context(), backend.Spec{AgentID: "stuck@t", Run: func(context.Context) error {
		<-release
		return nil
	}})
	if err != nil {
		t.Fatalf("Spawn = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := h.Kill(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Kill with a done ctx = %v; want context.Canceled", err)
	}
	if err := b.Close(ctx); err == nil || !strings.Contains(err.Error(), "1 teammates still running") {
		t.Errorf("Close with a done ctx = %v; want an error naming the running teammate", err)
	}
	close(release)
	if err := b.Close(t.Context()); err != nil {
		t.Errorf("Close = %v", err)
	}
	if !errors.Is(h.Err(), backend.ErrKilled) {
		t.Errorf("Err = %v; want ErrKilled", h.Err())
	}
}

func TestSpawnRefusesSpecWithoutRun(t *testing.T) {
	b := inprocess.New()
	t.Cleanup(func() { b.Close(context.Background()) })
	_, err := b.Spawn(t.Context(), backend.Spec{AgentID: "x@t"})
	if err == nil || !strings.Contains(err.Error(), "no Run function") {
		t.Errorf("Spawn without Run = %v; want an error naming the missing Run", err)
	}
}

// BenchmarkSpawnKill measures one in-process teammate's life: Spawn until
// Run runs, then Kill.
func BenchmarkSpawnKill(b *testing.B) {
	be := inprocess.New()
	b.Cleanup(func() { be.Close(context.Background()) })
	started := make(chan struct{})
	spec := backend.Spec{AgentID: "bench@t", Run: func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}}
	for b.Loop() {
		h, err := be.Spawn(b.Context(), spec)
		if err != nil {
			b.Fatal(err)
		}
		<-started
		if err := h.Kill(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

package kit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/task"
)

// workerClaims against a real task registry: a refusal names the path
// relative to the working folder (reached through a link) and the holder;
// a holder whose task has ended loses its claims at the next claim, before
// the release on its end event has run; the release on the end event
// frees the rest; many workers at once under -race.
func TestWorkerClaims(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o755)
	cwd := filepath.Join(base, "link")
	if err := os.Symlink(real, cwd); err != nil {
		t.Fatal(err)
	}
	reg := task.New(task.Config{Dir: filepath.Join(base, "tasks"), PollInterval: -1})
	t.Cleanup(func() { reg.Close(context.Background()) })
	c := newWorkerClaims(cwd, reg)

	release := make(chan struct{})
	st, err := reg.Go(task.State{ID: task.NewID(task.LocalAgent), Type: task.LocalAgent, Description: "holder"},
		func(ctx context.Context, _ task.ID) task.Outcome {
			<-release
			return task.Outcome{Status: task.Completed}
		})
	if err != nil {
		t.Fatal(err)
	}
	a := coordinator.Worker{ID: string(st.ID), Description: "fix parser"}
	b := coordinator.Worker{ID: "a-other", Description: "other"}
	if err := c.claim(a, filepath.Join(cwd, "src", "a.go")); err != nil {
		t.Fatal(err)
	}
	if err := c.claim(a, filepath.Join(real, "other.go")); err != nil {
		t.Fatal(err)
	}
	err = c.claim(b, filepath.Join(real, "src", "x", "..", "a.go"))
	var ce *coordinator.ClaimedError
	if !errors.As(err, &ce) || ce.Path != filepath.Join("src", "a.go") || ce.Holder != a {
		t.Fatalf("claim of a held file = %v; want a refusal naming src/a.go and %v", err, a)
	}
	if want := `src/a.go is being edited by worker ` + a.ID + ` ("fix parser")`; !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q lacks %q", err, want)
	}
	// The holder's task ends: its claims go.
	sub := reg.Subscribe()
	defer sub.Close()
	close(release)
	for {
		e, err := sub.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == task.EventTerminated && e.State.ID == st.ID {
			break
		}
	}
	if err := c.claim(b, filepath.Join(cwd, "src", "a.go")); err != nil {
		t.Errorf("claim after the holder ended: %v", err)
	}
	// The release on the end event frees other.go too (it runs on its own
	// goroutine: wait for it).
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		if _, held := c.claims.Holder(filepath.Join(real, "other.go")); !held {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("other.go was never released")
		case <-time.After(10 * time.Millisecond):
		}
	}

	var wg sync.WaitGroup
	var granted sync.Map
	for i := range 8 {
		w := coordinator.Worker{ID: fmt.Sprintf("w%d", i)}
		wg.Go(func() {
			for j := range 50 {
				p := filepath.Join(cwd, fmt.Sprintf("f%d.go", j%4))
				if err := c.claim(w, p); err == nil {
					if prev, loaded := granted.LoadOrStore(p, w.ID); loaded && prev != w.ID {
						t.Errorf("%s granted to %s and %s", p, prev, w.ID)
					}
				} else if !errors.As(err, new(*coordinator.ClaimedError)) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

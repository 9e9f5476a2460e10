package coordinator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestClaims(t *testing.T) {
	var c Claims
	a := Worker{ID: "a1b2c3", Description: "fix parser"}
	b := Worker{ID: "b4d5e6"}
	if err := c.Claim(a, "/src/a.go"); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim(a, "/src/./a.go"); err != nil {
		t.Errorf("a second claim by the holder: %v", err)
	}
	err := c.Claim(b, "/src/x/../a.go")
	var ce *ClaimedError
	if !errors.As(err, &ce) || ce.Holder != a || ce.Path != "/src/a.go" {
		t.Fatalf("claim of a held file = %v; want a *ClaimedError naming %v", err, a)
	}
	for _, want := range []string{`/src/a.go is being edited by worker a1b2c3 ("fix parser")`, "coordinator", "Do not retry"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if err := c.Claim(b, "/src/b.go"); err != nil {
		t.Errorf("claim of a free file: %v", err)
	}
	if h, ok := c.Holder("/src/a.go"); !ok || h != a {
		t.Errorf("Holder = %v, %v; want %v", h, ok, a)
	}
	if got := c.ReleaseAll(a.ID); !slices.Equal(got, []string{"/src/a.go"}) {
		t.Errorf("ReleaseAll = %v", got)
	}
	if _, ok := c.Holder("/src/a.go"); ok {
		t.Error("a released file still has a holder")
	}
	if err := c.Claim(b, "/src/a.go"); err != nil {
		t.Errorf("claim after the holder released: %v", err)
	}
	if got := c.Held(b.ID); !slices.Equal(got, []string{"/src/a.go", "/src/b.go"}) {
		t.Errorf("Held = %v", got)
	}
	if got := c.ReleaseAll("nobody"); got != nil {
		t.Errorf("ReleaseAll of an unknown worker = %v", got)
	}
	if (Worker{ID: "x"}).String() != "worker x" {
		t.Errorf("String = %q", Worker{ID: "x"})
	}
	if err := c.Claim(Worker{}, "/a"); err == nil {
		t.Error("a claim without a worker id was accepted")
	}
	if err := c.Claim(a, "rel/a.go"); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("relative path: %v", err)
	}
}

// Many workers race for the same files: each file has exactly one holder
// at any time, and every claim is either granted or refused naming the
// holder of the moment.
func TestClaimsConcurrent(t *testing.T) {
	var c Claims
	const workers, files, rounds = 16, 8, 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	owned := map[string]string{} // what each winner believes it holds
	errs := make(chan error, workers)
	for i := range workers {
		w := Worker{ID: fmt.Sprintf("w%02d", i)}
		wg.Go(func() {
			for r := range rounds {
				p := fmt.Sprintf("/repo/f%d.go", (i+r)%files)
				err := c.Claim(w, p)
				var ce *ClaimedError
				switch {
				case err == nil:
					mu.Lock()
					if prev, ok := owned[p]; ok && prev != w.ID {
						mu.Unlock()
						errs <- fmt.Errorf("%s granted %s while %s held it", p, w.ID, prev)
						return
					}
					owned[p] = w.ID
					mu.Unlock()
				case errors.As(err, &ce):
					if ce.Holder.ID == w.ID {
						errs <- fmt.Errorf("%s refused to its own holder", p)
						return
					}
				default:
					errs <- err
					return
				}
				if r%5 == 4 {
					mu.Lock()
					for _, q := range c.ReleaseAll(w.ID) {
						if owned[q] != w.ID {
							mu.Unlock()
							errs <- fmt.Errorf("%s released %s held by %s", w.ID, q, owned[q])
							return
						}
						delete(owned, q)
					}
					mu.Unlock()
				}
				c.Holder(p)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClaimPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	base, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(base, "a.go")
	for _, p := range []string{
		filepath.Join(real, "a.go"),
		filepath.Join(dir, "link", "a.go"),
		dir + "/real/sub/../a.go",
		dir + "/link/./a.go",
	} {
		got, err := ClaimPath(p)
		if err != nil || got != want {
			t.Errorf("ClaimPath(%s) = %s, %v; want %s", p, got, err, want)
		}
	}
	// A file in folders that do not exist yet, below a link.
	got, err := ClaimPath(filepath.Join(dir, "link", "new", "deep", "b.go"))
	if want := filepath.Join(base, "new", "deep", "b.go"); err != nil || got != want {
		t.Errorf("ClaimPath of a new file = %s, %v; want %s", got, err, want)
	}
	if _, err := ClaimPath("rel/a.go"); err == nil {
		t.Error("ClaimPath accepted a relative path")
	}
	// A file used as a folder is an error, not a silent key.
	file := filepath.Join(real, "plain")
	os.WriteFile(file, nil, 0o644)
	if _, err := ClaimPath(filepath.Join(file, "x", "y")); err == nil {
		t.Error("ClaimPath below a regular file succeeded")
	}
}

// BenchmarkClaim is the cost a guarded Write or Edit pays: the path's key
// (a link resolution of its folder) and the claim.
func BenchmarkClaim(b *testing.B) {
	dir := b.TempDir()
	var c Claims
	w := Worker{ID: "w1"}
	p := filepath.Join(dir, "src", "..", "a.go")
	for b.Loop() {
		key, err := ClaimPath(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Claim(w, key); err != nil {
			b.Fatal(err)
		}
	}
}

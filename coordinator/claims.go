package coordinator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Worker names the holder of a write claim for the messages that mention
// it.
type Worker struct {
	// ID is the worker's agent id (its task id); claims are keyed by it.
	ID string
	// Description is the short label the coordinator gave the worker;
	// optional.
	Description string
}

// String returns "worker a1b2c3 (\"fix parser\")", or "worker a1b2c3".
func (w Worker) String() string {
	if w.Description == "" {
		return "worker " + w.ID
	}
	return fmt.Sprintf("worker %s (%q)", w.ID, w.Description)
}

// ClaimedError is the refusal of a write to a file another worker holds.
// Its message names the holder and tells the model what to do instead.
type ClaimedError struct {
	Path   string // the claimed file, as given to Claim
	Holder Worker
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("%s is being edited by %s; only one worker may write a file at a time. Do not retry: leave this file alone and finish the rest of your task, and say in your report that you need %s changed, so the coordinator can hand the change to that worker or start you again once it has finished",
		e.Path, e.Holder, filepath.Base(e.Path))
}

// Claims is the write-claim table of a coordinator session: while a worker
// holds a claim on a file, another worker's claim of it is refused. A
// worker claims a file when it first writes it and keeps the claim until
// ReleaseAll, which the runtime calls when the worker ends (whatever the
// way). Reads are never claimed.
//
// Paths are compared after filepath.Clean and must be absolute; callers
// that take paths from a model canonicalize them first with ClaimPath so
// that "a/../b" and symbolic links to a folder name one file once.
//
// The zero Claims is empty and ready to use. A Claims is safe for
// concurrent use.
type Claims struct {
	mu     sync.Mutex
	holder map[string]Worker   // guarded by mu; path -> holder
	held   map[string][]string // guarded by mu; worker id -> paths, in claim order
}

// Claim gives path to w, or reports who holds it with a *ClaimedError.
// Claiming a file w already holds is a no-op. An empty worker id or a path
// that is not absolute is refused.
func (c *Claims) Claim(w Worker, path string) error {
	if w.ID == "" {
		return errors.New("claim: no worker id")
	}
	if !filepath.IsAbs(path) {
		return fmt.Errorf("claim %q: path is not absolute", path)
	}
	path = filepath.Clean(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.holder[path]; ok {
		if h.ID == w.ID {
			return nil
		}
		return &ClaimedError{Path: path, Holder: h}
	}
	if c.holder == nil {
		c.holder, c.held = map[string]Worker{}, map[string][]string{}
	}
	c.holder[path] = w
	c.held[w.ID] = append(c.held[w.ID], path)
	return nil
}

// ReleaseAll drops every claim of the worker id and returns the paths it
// held, in claim order.
func (c *Claims) ReleaseAll(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	paths := c.held[id]
	delete(c.held, id)
	for _, p := range paths {
		delete(c.holder, p)
	}
	return paths
}

// Holder returns the worker that holds path, if any.
func (c *Claims) Holder(path string) (Worker, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.holder[filepath.Clean(path)]
	return w, ok
}

// Held returns the paths the worker id holds, sorted.
func (c *Claims) Held(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	paths := slices.Clone(c.held[id])
	slices.Sort(paths)
	return paths
}

// ClaimPath returns the key under which path (absolute) is claimed: the
// path cleaned, with the symbolic links of its deepest existing folder
// resolved, so that two spellings of one file give one key. The file
// itself is not resolved: the file tools replace a link to a file by a
// regular file (they write a temp file and rename it over the link), so
// writing the link never changes its target.
func ClaimPath(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("claim path %q: not absolute", path)
	}
	path = filepath.Clean(path)
	dir, rest := filepath.Dir(path), []string{filepath.Base(path)}
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("claim path %s: %w", path, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return path, nil
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = parent
	}
}

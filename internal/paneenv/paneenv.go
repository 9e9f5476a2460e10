// Package paneenv hands a pane teammate its environment through a file,
// never through a command line: a pane backend (tmux, iTerm2) writes the
// variables of a backend.Spec to a file only its user can read, and the
// pane's shell reads the file and removes it before the teammate starts
// (backend.PaneCommand). API keys, tokens and OTLP headers so never appear
// in any process's argv, which every local user can read in
// /proc/<pid>/cmdline.
package paneenv

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/troupe-dev/troupe/backend"
)

// Dir is one backend's private folder of environment files: created 0700
// under the temporary folder on the first Write, removed by Close. It is
// safe for concurrent use.
type Dir struct {
	mu   sync.Mutex
	path string // "" until the first Write, and after Close
}

// Write writes env to a new file of the folder, mode 0600, and returns
// its absolute path; "" for an empty env. The pane's shell removes the
// file once read; Remove removes one whose pane never started.
func (d *Dir) Write(env map[string]string) (string, error) {
	if len(env) == 0 {
		return "", nil
	}
	text, err := backend.EnvFile(env)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		p, err := os.MkdirTemp("", "troupe-pane-env-") // 0700
		if err != nil {
			return "", fmt.Errorf("create the folder of pane environment files: %w", err)
		}
		if d.path, err = filepath.Abs(p); err != nil {
			os.Remove(p)
			return "", err
		}
	}
	f, err := os.CreateTemp(d.path, "env-") // 0600
	if err != nil {
		return "", fmt.Errorf("write a pane environment file: %w", err)
	}
	_, err = f.Write(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write pane environment file %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// Remove removes a file Write returned (no-op for ""), when its pane did
// not start.
func (d *Dir) Remove(path string) {
	if path != "" {
		os.Remove(path)
	}
}

// Close removes the folder and whatever files a pane did not read.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		return nil
	}
	err := os.RemoveAll(d.path)
	d.path = ""
	return err
}

// Package logtest holds what tests need to look at a logger's output.
package logtest

import (
	"strings"
	"sync"
)

// Buffer collects a logger's output: safe for concurrent writers and a
// reader. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *Buffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// String returns everything written so far.
func (w *Buffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

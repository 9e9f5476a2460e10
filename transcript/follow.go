package transcript

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/internal/dirwatch"
)

// OfAgent returns the one of paths that is the transcript of agent; a
// path that cannot be read is passed over. With several, the last wins.
// None is ErrNotFound.
func OfAgent(paths []string, agent string) (string, error) {
	found := ""
	for _, p := range paths {
		if t, err := Read(p); err == nil && t.Header.Agent == agent {
			found = p
		}
	}
	if found == "" {
		return "", fmt.Errorf("%w: no transcript of %q", ErrNotFound, agent)
	}
	return found, nil
}

// Agents returns the agents of the transcripts at paths, in order,
// passing over any that cannot be read.
func Agents(paths []string) []string {
	var out []string
	for _, p := range paths {
		if t, err := Read(p); err == nil {
			out = append(out, t.Header.Agent)
		}
	}
	return out
}

// Follow passes emit the lines appended to the transcript at path from
// offset off on (Tail's offset, such as Transcript.Size), until ctx ends
// (then it returns nil) or emit or a read fails. It is woken by a watch
// of the file's folder (fsnotify, or polling where that is not
// available), never a fixed look.
func Follow(ctx context.Context, path string, off int64, emit func([]Line) error) error {
	w, err := dirwatch.New(dirwatch.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	name := filepath.Base(path)
	kick, cancel, err := w.Subscribe(filepath.Dir(path), func(n string) bool { return n == name })
	if err != nil {
		return err
	}
	defer cancel()
	for {
		// A look first: lines appended between the caller's read and
		// the watch are passed on too.
		if st, err := os.Stat(path); err == nil && st.Size() != off {
			lines, next, err := Tail(path, off)
			if err != nil {
				return err
			}
			if len(lines) > 0 {
				if err := emit(lines); err != nil {
					return err
				}
			}
			off = next
		}
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		}
	}
}

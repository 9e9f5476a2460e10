package tui

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"github.com/troupe-dev/troupe/session"
)

// maxDialogFile bounds the bytes of a file read for an edit's dialog.
const maxDialogFile = 4 << 20

// fileMsg carries the file a question's edit or write changes into
// Update.
type fileMsg struct {
	id   string
	file fileText
}

// readFile returns the command that reads the file q's Edit, MultiEdit
// or Write changes, so its dialog can show the diff against what is on
// disk; nil for other tools.
func (m *model) readFile(q session.Question) tea.Cmd {
	switch q.Tool {
	case "Edit", "MultiEdit", "Write":
	default:
		return nil
	}
	path := decodeInput(q.Input).str("file_path")
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) && m.opts.Dir != "" {
		path = filepath.Join(m.opts.Dir, path)
	}
	id := q.ID
	return func() tea.Msg {
		return fileMsg{id: id, file: readText(path)}
	}
}

// readText reads path for a dialog: a missing file is a new one.
func readText(path string) fileText {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileText{}
	}
	if err != nil {
		return fileText{err: err.Error()}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDialogFile+1))
	switch {
	case err != nil:
		return fileText{err: err.Error()}
	case len(b) > maxDialogFile:
		return fileText{err: "larger than 4 MB"}
	}
	return fileText{text: string(b), exists: true}
}

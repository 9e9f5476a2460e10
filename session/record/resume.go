package record

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/llm"
)

// Resumed is a recorded session loaded to go on with.
type Resumed struct {
	File *File
	Path string
	// History is File.Messages, cut before an unfinished last turn (a
	// run that ended early: an API error, a kill, a crash); Cut says why
	// it was cut, nil when it is whole.
	History []llm.Message
	Cut     error
}

// CwdError is a session resumed from another folder than the one it was
// recorded in.
type CwdError struct{ ID, Recorded, Cwd string }

func (e *CwdError) Error() string {
	return fmt.Sprintf("session %s was recorded in %s, not in %s: run it from there (or with --cwd %s)", e.ID, e.Recorded, e.Cwd, e.Recorded)
}

// ErrNoSession is matched by Resume's error when dir holds no session
// of that id.
var ErrNoSession = errors.New("no such session")

// Latest returns the id of the latest session recorded in dir for cwd;
// false when none was.
func Latest(dir, cwd string) (string, bool) {
	list := List(dir, cwd)
	if len(list) == 0 {
		return "", false
	}
	return list[0].ID, true
}

// Resume loads session id of dir to go on with in cwd. Its first line
// must name id, and it must have been recorded in cwd (a *CwdError when
// not). A missing session's error matches ErrNoSession and names the
// latest sessions of cwd.
func Resume(dir, id, cwd string) (*Resumed, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q: not a session id (letters, digits, '.', '_' and '-')", id)
	}
	path := Path(dir, id)
	f, err := Load(path)
	if errors.Is(err, os.ErrNotExist) {
		latest := ""
		if list := List(dir, cwd); len(list) > 0 {
			var ids []string
			for _, si := range list[:min(len(list), 5)] {
				ids = append(ids, si.ID)
			}
			latest = fmt.Sprintf(". Latest sessions of %s: %s", cwd, strings.Join(ids, ", "))
		}
		return nil, fmt.Errorf("%s: %w in %s%s", id, ErrNoSession, dir, latest)
	}
	if err != nil {
		return nil, fmt.Errorf("resume session %s: %w", id, err)
	}
	if f.Header.SessionID != id {
		return nil, fmt.Errorf("session file %s line 1: session_id %q does not match its file name", path, f.Header.SessionID)
	}
	if f.Header.Cwd != cwd {
		return nil, &CwdError{ID: id, Recorded: f.Header.Cwd, Cwd: cwd}
	}
	r := &Resumed{File: f, Path: path, History: f.Messages}
	if n, err := agent.CheckHistory(f.Messages); err != nil {
		r.History, r.Cut = f.Messages[:n], err
	}
	return r, nil
}

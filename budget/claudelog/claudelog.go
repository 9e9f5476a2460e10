// Package claudelog reads what Claude Code teammates spend from their
// session transcripts, the one place Claude Code records it: every
// assistant line of
//
//	<CLAUDE_CONFIG_DIR>/projects/<project>/<session-id>.jsonl
//
// carries the model call's message (its id, model and usage, as the
// Messages API returned them) and, for a teammate, its teamName and
// agentName. One call may be written as several lines (one per content
// block), each with the same message id and usage: a call counts once.
//
// Reading tolerates a torn last line (Claude Code still writing it); a
// complete line that is not JSON is an error naming its file and line,
// and the lines after it are still read. Everything here is safe for
// concurrent use.
package claudelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/troupe-dev/troupe/llm"
)

// Call is one model call a Claude Code agent made.
type Call struct {
	ID      string // the message id: one per call
	Session string // Claude Code's session id
	Team    string // "" for an agent outside a team
	Agent   string // the teammate's name, "" for a lead or a solo session
	Model   string
	Usage   llm.Usage
}

// ErrMalformed marks a transcript line that is not JSON, or an assistant
// line whose usage is not one.
var ErrMalformed = errors.New("claudelog: malformed line")

// line is the part of a transcript line read.
type line struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	TeamName  string `json:"teamName"`
	AgentName string `json:"agentName"`
	Message   *struct {
		ID    string     `json:"id"`
		Model string     `json:"model"`
		Usage *llm.Usage `json:"usage"`
	} `json:"message"`
}

// ParseLine returns the call an assistant line records; ok is false for
// any other line (a user line, a summary, an assistant line without
// usage). A line that is not JSON, or whose counts are negative, is an
// error matching ErrMalformed.
func ParseLine(b []byte) (c Call, ok bool, err error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Call{}, false, nil
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return Call{}, false, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if l.Type != "assistant" || l.Message == nil || l.Message.Usage == nil || l.Message.ID == "" {
		return Call{}, false, nil
	}
	u := *l.Message.Usage
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
		return Call{}, false, fmt.Errorf("%w: message %s: a negative token count", ErrMalformed, l.Message.ID)
	}
	return Call{ID: l.Message.ID, Session: l.SessionID, Team: l.TeamName, Agent: l.AgentName, Model: l.Message.Model, Usage: u}, true, nil
}

// maxSeen bounds the message ids a Follower remembers.
const maxSeen = 1 << 16

// Follower reads the calls appended to the transcripts of a Claude Code
// projects folder (<CLAUDE_CONFIG_DIR>/projects), each call once.
type Follower struct {
	dir string

	mu   sync.Mutex
	off  map[string]int64 // guarded by mu: per file, the end of the last complete line read
	seen map[string]bool  // guarded by mu: message ids counted
	ids  []string         // guarded by mu: seen in order, to forget the oldest
}

// NewFollower returns a Follower of the transcripts under dir, from their
// current ends: what was spent before is not its to report. A transcript
// that appears later is read from its start.
func NewFollower(dir string) *Follower {
	f := &Follower{dir: dir, off: map[string]int64{}, seen: map[string]bool{}}
	for _, p := range f.files() {
		if st, err := os.Stat(p); err == nil {
			f.off[p] = st.Size()
		}
	}
	return f
}

func (f *Follower) files() []string {
	ps, _ := filepath.Glob(filepath.Join(f.dir, "*", "*.jsonl")) // the pattern is valid: no error
	return ps
}

// Next returns the calls appended since the last call, in file order. A
// malformed line is skipped with an error naming it; the other calls
// still come.
func (f *Follower) Next() ([]Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	var errs []error
	for _, p := range f.files() {
		calls, err := f.readLocked(p)
		out = append(out, calls...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func (f *Follower) readLocked(path string) ([]Call, error) {
	st, err := os.Stat(path)
	if err != nil || st.Size() <= f.off[path] {
		return nil, nil // gone, or nothing new
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b := make([]byte, st.Size()-f.off[path])
	n, err := fh.ReadAt(b, f.off[path])
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	b = b[:n]
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil, nil // a torn line waits for its end
	}
	f.off[path] += int64(end + 1)
	var out []Call
	var errs []error
	for i, l := range bytes.Split(b[:end], []byte("\n")) {
		c, ok, err := ParseLine(l)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (appended line %d): %w", path, i+1, err))
			continue
		}
		if !ok || f.seen[c.ID] {
			continue
		}
		f.remember(c.ID)
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

func (f *Follower) remember(id string) {
	f.seen[id] = true
	f.ids = append(f.ids, id)
	if len(f.ids) > maxSeen {
		old := f.ids[0]
		f.ids = slices.Delete(f.ids, 0, 1)
		delete(f.seen, old)
	}
}

// ProjectDir is the folder Claude Code keeps the transcripts of a session
// in cwd under (below its projects folder): cwd with every character but
// ASCII letters and digits turned into "-".
func ProjectDir(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// Package record keeps the record of a lead's session, from which
// `troupe -p --resume ID` and `--continue` continue it:
// <home>/sessions/<session-id>.jsonl (mode 0600), one JSON object a line,
// appended as the run goes so that a crash leaves a readable prefix:
//
//	{"type":"session","version":1,"session_id":"...","cwd":"/abs","coordinator":true,"provider":"anthropic","model":"","time":"..."}
//	{"type":"message","message":{"role":"user","content":[...]}}
//	{"type":"reset","messages":[...]}   (the conversation was replaced: compacted, or repaired on resume)
//	{"type":"remote","remote":{...}}    (a remote agent's job submitted, started or ended: remote.go)
//	{"type":"schedule","schedule":{...}} (the cron jobs and the wakeup, whole, after each change: schedule.go)
package record

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/internal/jsonl"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/schedule"
	"github.com/troupe-dev/troupe/task"
)

// Version is the version of the session file format.
const Version = 1

// maxLine bounds one line of a session file.
const maxLine = 64 << 20

// Line is one line of a session file; which fields are set depends
// on Type.
type Line struct {
	Type string `json:"type"` // session, message or reset

	// session
	Version     int    `json:"version,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	Coordinator bool   `json:"coordinator,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Model       string `json:"model,omitempty"`
	Time        string `json:"time,omitempty"`

	Message  *llm.Message    `json:"message,omitempty"`  // message
	Messages []llm.Message   `json:"messages,omitempty"` // reset
	Remote   *Remote         `json:"remote,omitempty"`   // remote (remote.go)
	Schedule *schedule.State `json:"schedule,omitempty"` // schedule (schedule.go)
}

// File is a parsed session file.
type File struct {
	Header   Line
	Messages []llm.Message
	// Remote are the remote agents' jobs of the session, in the order
	// they were submitted (remote.go).
	Remote []RemoteJob
	// Schedule is the session's schedule as last recorded; nil when
	// none was (schedule.go).
	Schedule *schedule.State
	// Size is the length of the file's complete lines: a last line
	// without its newline is a write cut short, dropped on append.
	Size int64
}

var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can be a session id: letters, digits, '.',
// '_' and '-', at most 128, not starting with a punctuation mark (it
// names a file).
func ValidID(id string) bool { return sessionIDPattern.MatchString(id) }

// Path returns the file of session id in dir.
func Path(dir, id string) string { return filepath.Join(dir, id+".jsonl") }

// Cwd returns the working folder of session id in dir, "" when its
// record cannot be read.
func Cwd(dir, id string) string {
	if !ValidID(id) {
		return ""
	}
	h, err := readHeader(Path(dir, id))
	if err != nil {
		return ""
	}
	return h.Cwd
}

// Create starts the record of a new session in dir (made 0700 when
// missing): its file, created 0600 and never over an existing one (an id
// used before keeps its own record), begins with hdr (Type and Version
// are set here). stderr hears, at Close, that the record failed.
func Create(dir string, hdr Line, stderr io.Writer) (*Log, error) {
	if !ValidID(hdr.SessionID) {
		return nil, fmt.Errorf("session id %q cannot name a file", hdr.SessionID)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := Path(dir, hdr.SessionID)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	l := &Log{f: f, path: path, stderr: stderr}
	hdr.Type, hdr.Version = "session", Version
	hdr.Message, hdr.Messages, hdr.Remote, hdr.Schedule = nil, nil, nil, nil
	l.write(hdr)
	return l.started()
}

// Append continues the record of the session read from path as prev:
// a last line a crash cut short is dropped, and when history is not nil
// it replaces the conversation (a resume repaired it).
func Append(path string, prev *File, history []llm.Message, stderr io.Writer) (*Log, error) {
	if err := os.Truncate(path, prev.Size); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	l := &Log{f: f, path: path, stderr: stderr}
	if history != nil {
		l.write(Line{Type: "reset", Messages: history})
	}
	return l.started()
}

// SetMessages gives l the lead's conversation, recorded whole after a
// compaction; call it before the lead runs.
func (l *Log) SetMessages(f func() []llm.Message) {
	if l != nil {
		l.messages = f
	}
}

// Parse reads a session file; name is its path, for errors, which
// name the line at fault.
func Parse(r io.Reader, name string) (*File, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var s File
	for n := 1; ; n++ {
		line, err := jsonl.ReadLine(br, maxLine)
		if errors.Is(err, jsonl.ErrTooLong) {
			return nil, fmt.Errorf("session file %s line %d: %w", name, n, err)
		}
		if err == io.EOF {
			// A last line without its newline was cut short by a crash.
			if n == 1 {
				return nil, fmt.Errorf("session file %s: no complete session line", name)
			}
			return &s, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read session file %s: %w", name, err)
		}
		if err := s.add(n, line); err != nil {
			return nil, fmt.Errorf("session file %s line %d: %w", name, n, err)
		}
		s.Size += int64(len(line))
	}
}

// add applies line n of a session file.
func (s *File) add(n int, line []byte) error {
	var l Line
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if n == 1 {
		if l.Type != "session" {
			return fmt.Errorf("type %q: the first line must be the session line", l.Type)
		}
		switch {
		case l.Version != Version:
			return fmt.Errorf("version %d: want %d", l.Version, Version)
		case !sessionIDPattern.MatchString(l.SessionID):
			return fmt.Errorf("session_id %q: want letters, digits, '.', '_' and '-'", l.SessionID)
		case !filepath.IsAbs(l.Cwd):
			return fmt.Errorf("cwd %q: want an absolute path", l.Cwd)
		}
		l.Message, l.Messages, l.Remote, l.Schedule = nil, nil, nil, nil // not header fields
		s.Header = l
		return nil
	}
	switch l.Type {
	case "message":
		if l.Message == nil {
			return errors.New("a message line without its message")
		}
		if err := checkRole(*l.Message); err != nil {
			return err
		}
		s.Messages = append(s.Messages, *l.Message)
	case "reset":
		for i, m := range l.Messages {
			if err := checkRole(m); err != nil {
				return fmt.Errorf("message %d: %w", i+1, err)
			}
		}
		s.Messages = l.Messages
	case "remote":
		return s.addRemote(l.Remote)
	case "schedule":
		return s.addSchedule(l.Schedule)
	case "session":
		return errors.New("a second session line")
	default:
		return fmt.Errorf("unknown type %q: want message, reset, remote or schedule", l.Type)
	}
	return nil
}

func checkRole(m llm.Message) error {
	if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
		return fmt.Errorf("message role %q: want user or assistant", m.Role)
	}
	return nil
}

// Load reads the session file at path.
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Info is what listing sessions shows of one.
type Info struct {
	ID, Cwd string
	Mod     time.Time
}

// List returns the sessions in dir recorded in cwd, newest first
// (by their last write). Files that do not parse are skipped.
func List(dir, cwd string) []Info {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var out []Info
	for _, p := range paths {
		hdr, err := readHeader(p)
		if err != nil || hdr.Cwd != cwd {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		out = append(out, Info{ID: hdr.SessionID, Cwd: hdr.Cwd, Mod: fi.ModTime()})
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := b.Mod.Compare(a.Mod); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// readHeader parses the first line of a session file only.
func readHeader(path string) (Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return Line{}, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<20)).ReadBytes('\n')
	if err != nil {
		return Line{}, err
	}
	var s File
	if err := s.add(1, line); err != nil {
		return Line{}, err
	}
	return s.Header, nil
}

// started returns l, or its first write's error with the file closed.
func (l *Log) started() (*Log, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		l.f.Close()
		return nil, l.err
	}
	return l, nil
}

// Log appends a run's conversation to its session file. A nil
// *Log records nothing.
type Log struct {
	path   string
	stderr io.Writer // where close reports a failed record
	// messages returns the lead's conversation, for a reset after a
	// compaction; set before the lead runs.
	messages func() []llm.Message

	mu  sync.Mutex
	f   *os.File // guarded by mu
	err error    // guarded by mu; the first write error

	// The remote jobs followed (remote.go).
	jobsMu sync.Mutex
	jobs   map[string]bool      // guarded by jobsMu; the ids of the jobs recorded
	subs   []*task.Subscription // guarded by jobsMu; FollowRemote's, closed by Close
	wg     sync.WaitGroup       // FollowRemote's goroutines
}

// Event records the messages of a lead's Event (its OnEvent).
func (l *Log) Event(e agent.Event) {
	if l == nil {
		return
	}
	switch e.Type {
	case agent.EventUser, agent.EventAssistant:
		if e.Message != nil {
			l.write(Line{Type: "message", Message: e.Message})
		}
	case agent.EventCompact:
		if l.messages != nil {
			l.write(Line{Type: "reset", Messages: l.messages()})
		}
	}
}

// Reset records the lead's whole conversation, replacing what was
// recorded before it.
func (l *Log) Reset(ms []llm.Message) {
	if l == nil {
		return
	}
	l.write(Line{Type: "reset", Messages: ms})
}

// write appends one line in one write, so a crash cuts at most that line.
func (l *Log) write(v Line) {
	b, err := json.Marshal(v) // escapes every newline: one line
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if err == nil {
		_, err = l.f.Write(append(b, '\n'))
	}
	if err != nil {
		l.err = fmt.Errorf("record session in %s: %w", l.path, err)
	}
}

// Close closes the file; a record that failed is said on stderr.
func (l *Log) Close() {
	if l == nil {
		return
	}
	l.jobsMu.Lock()
	subs := l.subs
	l.subs = nil
	l.jobsMu.Unlock()
	for _, s := range subs {
		s.Close() // what is queued is still recorded
	}
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.f.Close()
	if l.err != nil {
		err = l.err
	}
	if err != nil {
		fmt.Fprintf(l.stderr, "troupe: the session record is incomplete: %v\n", err)
	}
}

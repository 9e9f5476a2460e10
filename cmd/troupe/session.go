package main

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

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/llm"
)

// Sessions: each `troupe -p` run records its session in
// <home>/sessions/<session-id>.jsonl (mode 0600), one JSON object a line,
// appended as the run goes so that a crash leaves a readable prefix:
//
//	{"type":"session","version":1,"session_id":"...","cwd":"/abs","coordinator":true,"provider":"anthropic","model":"","time":"..."}
//	{"type":"message","message":{"role":"user","content":[...]}}
//	{"type":"reset","messages":[...]}   (the conversation was replaced: compacted, or repaired on resume)
//
// `troupe -p --resume ID` and `--continue` (the latest session of the
// working folder) load the conversation into the lead, re-enter or leave
// coordinator mode to match the record, and append to the same file.

// sessionVersion is the version of the session file format.
const sessionVersion = 1

// maxSessionLine bounds one line of a session file.
const maxSessionLine = 64 << 20

// sessionFlags are the flags of `troupe -p` that continue a session.
type sessionFlags struct {
	resume       string
	continueLast bool
}

// addSessionFlags puts --resume and --continue on f.
func addSessionFlags(f *pflag.FlagSet, s *sessionFlags) {
	f.StringVar(&s.resume, "resume", "", "continue the recorded session `ID` (its conversation and its coordinator mode; ids are the session_id of the json and stream-json output, and the file names in <home>/sessions)")
	f.BoolVar(&s.continueLast, "continue", false, "continue the latest session recorded in the working folder")
}

// sessionLine is one line of a session file; which fields are set depends
// on Type.
type sessionLine struct {
	Type string `json:"type"` // session, message or reset

	// session
	Version     int    `json:"version,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	Coordinator bool   `json:"coordinator,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Model       string `json:"model,omitempty"`
	Time        string `json:"time,omitempty"`

	Message  *llm.Message  `json:"message,omitempty"`  // message
	Messages []llm.Message `json:"messages,omitempty"` // reset
}

// recordedSession is a parsed session file.
type recordedSession struct {
	header   sessionLine
	messages []llm.Message
	// size is the length of the file's complete lines: a last line
	// without its newline is a write cut short, dropped on append.
	size int64
}

var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// parseSession reads a session file; name is its path, for errors, which
// name the line at fault.
func parseSession(r io.Reader, name string) (*recordedSession, error) {
	br := bufio.NewReader(r)
	var s recordedSession
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > maxSessionLine {
				return nil, fmt.Errorf("session file %s line %d: longer than %d bytes", name, n, maxSessionLine)
			}
			var more []byte
			more, err = br.ReadSlice('\n')
			line = append(slices.Clip(line), more...)
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
		s.size += int64(len(line))
	}
}

// add applies line n of a session file.
func (s *recordedSession) add(n int, line []byte) error {
	var l sessionLine
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if n == 1 {
		if l.Type != "session" {
			return fmt.Errorf("type %q: the first line must be the session line", l.Type)
		}
		switch {
		case l.Version != sessionVersion:
			return fmt.Errorf("version %d: want %d", l.Version, sessionVersion)
		case !sessionIDPattern.MatchString(l.SessionID):
			return fmt.Errorf("session_id %q: want letters, digits, '.', '_' and '-'", l.SessionID)
		case !filepath.IsAbs(l.Cwd):
			return fmt.Errorf("cwd %q: want an absolute path", l.Cwd)
		}
		l.Message, l.Messages = nil, nil // not header fields
		s.header = l
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
		s.messages = append(s.messages, *l.Message)
	case "reset":
		for i, m := range l.Messages {
			if err := checkRole(m); err != nil {
				return fmt.Errorf("message %d: %w", i+1, err)
			}
		}
		s.messages = l.Messages
	case "session":
		return errors.New("a second session line")
	default:
		return fmt.Errorf("unknown type %q: want message or reset", l.Type)
	}
	return nil
}

func checkRole(m llm.Message) error {
	if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
		return fmt.Errorf("message role %q: want user or assistant", m.Role)
	}
	return nil
}

// loadSession reads the session file at path.
func loadSession(path string) (*recordedSession, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSession(f, path)
}

// sessionInfo is what listing sessions shows of one.
type sessionInfo struct {
	id, cwd string
	mod     time.Time
}

// listSessions returns the sessions in dir recorded in cwd, newest first
// (by their last write). Files that do not parse are skipped.
func listSessions(dir, cwd string) []sessionInfo {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var out []sessionInfo
	for _, p := range paths {
		hdr, err := readSessionHeader(p)
		if err != nil || hdr.Cwd != cwd {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		out = append(out, sessionInfo{id: hdr.SessionID, cwd: hdr.Cwd, mod: fi.ModTime()})
	}
	slices.SortFunc(out, func(a, b sessionInfo) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// readSessionHeader parses the first line of a session file only.
func readSessionHeader(path string) (sessionLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return sessionLine{}, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<20)).ReadBytes('\n')
	if err != nil {
		return sessionLine{}, err
	}
	var s recordedSession
	if err := s.add(1, line); err != nil {
		return sessionLine{}, err
	}
	return s.header, nil
}

// sessions is the session side of one headless run: the folder of the
// session files, and the session it resumes (nil for a new one).
type sessions struct {
	a      *app
	dir    string // <home>/sessions; "" when the home cannot be resolved
	dirErr error
	prev   *recordedSession
	path   string // prev's file
	// history is prev's conversation, repaired; reset tells the log to
	// record it again (it was repaired).
	history []llm.Message
	reset   bool
}

// openSessions resolves the sessions folder and loads the session that
// --resume or --continue names, for a run in cwd. It sets the provider
// and model of h to the session's when the flags leave them open.
func (a *app) openSessions(h *headless, cwd string) (*sessions, error) {
	s := &sessions{a: a}
	home, err := a.home()
	if err == nil {
		s.dir = filepath.Join(home, "sessions")
	} else {
		s.dirErr = err
	}
	fl := h.session
	switch {
	case fl.resume != "" && fl.continueLast:
		return nil, usagef("--resume and --continue: give one of them")
	case fl.resume == "" && !fl.continueLast:
		return s, nil
	case s.dir == "":
		return nil, fmt.Errorf("find the session to resume: %w", s.dirErr)
	}
	id := fl.resume
	if fl.continueLast {
		list := listSessions(s.dir, cwd)
		if len(list) == 0 {
			return nil, fmt.Errorf("--continue: no session was recorded in %s (sessions are in %s); run troupe -p without --continue to start one", cwd, s.dir)
		}
		id = list[0].id
	} else if !sessionIDPattern.MatchString(id) {
		return nil, usagef("--resume %q: not a session id (letters, digits, '.', '_' and '-'; ids are the session_id of troupe -p --output-format json)", id)
	}
	s.path = filepath.Join(s.dir, id+".jsonl")
	prev, err := loadSession(s.path)
	if errors.Is(err, os.ErrNotExist) {
		msg := fmt.Sprintf("--resume %s: no such session in %s. Session ids are the session_id that troupe -p prints with --output-format json or stream-json, and the file names (without .jsonl) in that folder; --continue resumes the latest of the working folder", id, s.dir)
		if list := listSessions(s.dir, cwd); len(list) > 0 {
			var ids []string
			for _, si := range list[:min(len(list), 5)] {
				ids = append(ids, si.id)
			}
			msg += fmt.Sprintf(". Latest sessions of %s: %s", cwd, strings.Join(ids, ", "))
		}
		return nil, errors.New(msg)
	}
	if err != nil {
		return nil, fmt.Errorf("resume session %s: %w", id, err)
	}
	if prev.header.SessionID != id {
		return nil, fmt.Errorf("session file %s line 1: session_id %q does not match its file name", s.path, prev.header.SessionID)
	}
	if prev.header.Cwd != cwd {
		return nil, usagef("session %s was recorded in %s, not in %s: run it from there (or with --cwd %s)", id, prev.header.Cwd, cwd, prev.header.Cwd)
	}
	s.prev = prev
	s.history = prev.messages
	if n, err := agent.CheckHistory(prev.messages); err != nil {
		// A run that ended early (an API error, a kill, a crash) leaves an
		// unfinished last turn: resume from the last finished one.
		s.history, s.reset = prev.messages[:n], true
		fmt.Fprintf(a.Stderr, "troupe: session %s: resuming before its unfinished last turn (%d of %d messages kept: %v)\n", id, n, len(prev.messages), err)
	}
	if h.provider == "" && h.script == "" {
		h.provider = prev.header.Provider
	}
	if h.model == "" {
		h.model = prev.header.Model
	}
	return s, nil
}

// id returns the session id: the resumed session's, or a new one.
func (s *sessions) id(newID func() string) string {
	if s.prev != nil {
		return s.prev.header.SessionID
	}
	return newID()
}

// coordinatorMode reports whether the run is in coordinator mode: the
// resumed session's mode, else the flag or environment. A resumed mode
// that differs from the flag and environment is said on stderr.
func (s *sessions) coordinatorMode(h *headless) bool {
	asked := coordinator.Enabled(h.coordinator, s.a.Getenv)
	if s.prev == nil {
		return asked
	}
	rec := s.prev.header.Coordinator
	if rec != asked {
		if rec {
			fmt.Fprintf(s.a.Stderr, "troupe: resumed session %s was recorded in coordinator mode; coordinator mode on\n", s.prev.header.SessionID)
		} else {
			fmt.Fprintf(s.a.Stderr, "troupe: resumed session %s was recorded without coordinator mode; coordinator mode off\n", s.prev.header.SessionID)
		}
	}
	return rec
}

// record starts the record of this run: a new session file, or the
// resumed one appended to. A session that cannot be recorded is said on
// stderr; the run goes on.
func (s *sessions) record(id, cwd string, coord bool, info llm.Info, model string) *sessionLog {
	l, err := s.open(id, cwd, coord, info, model)
	if err != nil {
		fmt.Fprintf(s.a.Stderr, "troupe: the session is not recorded: %v\n", err)
		return nil
	}
	return l
}

func (s *sessions) open(id, cwd string, coord bool, info llm.Info, model string) (*sessionLog, error) {
	if s.prev != nil {
		// Drop a line a crash cut short, then append.
		if err := os.Truncate(s.path, s.prev.size); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		l := &sessionLog{f: f, path: s.path, stderr: s.a.Stderr}
		if s.reset {
			l.write(sessionLine{Type: "reset", Messages: s.history})
		}
		return l.started()
	}
	if s.dir == "" {
		return nil, s.dirErr
	}
	if !sessionIDPattern.MatchString(id) {
		return nil, fmt.Errorf("session id %q cannot name a file", id)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, id+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err // such as an id used before: its record is not mixed with ours
	}
	l := &sessionLog{f: f, path: path, stderr: s.a.Stderr}
	l.write(sessionLine{Type: "session", Version: sessionVersion, SessionID: id, Cwd: cwd, Coordinator: coord,
		Provider: info.Provider, Model: model, Time: s.a.Now().UTC().Format(time.RFC3339Nano)})
	return l.started()
}

// started returns l, or its first write's error with the file closed.
func (l *sessionLog) started() (*sessionLog, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		l.f.Close()
		return nil, l.err
	}
	return l, nil
}

// sessionLog appends a run's conversation to its session file. A nil
// *sessionLog records nothing.
type sessionLog struct {
	path   string
	stderr io.Writer // where close reports a failed record
	// messages returns the lead's conversation, for a reset after a
	// compaction; set before the lead runs.
	messages func() []llm.Message

	mu  sync.Mutex
	f   *os.File // guarded by mu
	err error    // guarded by mu; the first write error
}

// event records the messages of a lead's event (its OnEvent).
func (l *sessionLog) event(e agent.Event) {
	if l == nil {
		return
	}
	switch e.Type {
	case agent.EventUser, agent.EventAssistant:
		if e.Message != nil {
			l.write(sessionLine{Type: "message", Message: e.Message})
		}
	case agent.EventCompact:
		if l.messages != nil {
			l.write(sessionLine{Type: "reset", Messages: l.messages()})
		}
	}
}

// reset records the lead's whole conversation, replacing what was
// recorded before it.
func (l *sessionLog) reset(ms []llm.Message) {
	if l == nil {
		return
	}
	l.write(sessionLine{Type: "reset", Messages: ms})
}

// write appends one line in one write, so a crash cuts at most that line.
func (l *sessionLog) write(v sessionLine) {
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

// close closes the file; a record that failed is said on stderr.
func (l *sessionLog) close() {
	if l == nil {
		return
	}
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

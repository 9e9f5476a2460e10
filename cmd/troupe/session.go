package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/troupe-dev/troupe/cli"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/coordinator"
	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/session/record"
)

// Sessions: each `troupe -p` run is recorded (package session/record);
// --resume and --continue load one into the lead and append to it.

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

// sessions is the session side of one headless run: the folder of the
// session files, and the session it resumes (nil for a new one).
type sessions struct {
	a      *app
	dir    string // <home>/sessions; "" when the home cannot be resolved
	dirErr error
	prev   *record.File
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
	home, err := a.Home()
	if err == nil {
		s.dir = filepath.Join(home, "sessions")
	} else {
		s.dirErr = err
	}
	fl := h.session
	switch {
	case fl.resume != "" && fl.continueLast:
		return nil, cli.Usagef("--resume and --continue: give one of them")
	case fl.resume == "" && !fl.continueLast:
		return s, nil
	case s.dir == "":
		return nil, fmt.Errorf("find the session to resume: %w", s.dirErr)
	}
	id := fl.resume
	if fl.continueLast {
		latest, ok := record.Latest(s.dir, cwd)
		if !ok {
			return nil, fmt.Errorf("--continue: no session was recorded in %s (sessions are in %s); run troupe -p without --continue to start one", cwd, s.dir)
		}
		id = latest
	} else if !record.ValidID(id) {
		return nil, cli.Usagef("--resume %q: not a session id (letters, digits, '.', '_' and '-'; ids are the session_id of troupe -p --output-format json)", id)
	}
	r, err := record.Resume(s.dir, id, cwd)
	var cwdErr *record.CwdError
	switch {
	case errors.Is(err, record.ErrNoSession):
		return nil, fmt.Errorf("--resume %w. Session ids are the session_id that troupe -p prints with --output-format json or stream-json, and the file names (without .jsonl) in that folder; --continue resumes the latest of the working folder", err)
	case errors.As(err, &cwdErr):
		return nil, cli.Usagef("%v", cwdErr)
	case err != nil:
		return nil, err
	}
	prev := r.File
	s.prev, s.path, s.history, s.reset = prev, r.Path, r.History, r.Cut != nil
	if r.Cut != nil {
		fmt.Fprintf(a.Stderr, "troupe: session %s: resuming before its unfinished last turn (%d of %d messages kept: %v)\n", id, len(r.History), len(prev.Messages), r.Cut)
	}
	if h.model.Provider == "" && h.model.Script == "" {
		h.model.Provider = prev.Header.Provider
	}
	if h.model.Name == "" {
		h.model.Name = prev.Header.Model
	}
	return s, nil
}

// id returns the session id: the resumed session's, or a new one.
func (s *sessions) id(newID func() string) string {
	if s.prev != nil {
		return s.prev.Header.SessionID
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
	rec := s.prev.Header.Coordinator
	if rec != asked {
		if rec {
			fmt.Fprintf(s.a.Stderr, "troupe: resumed session %s was recorded in coordinator mode; coordinator mode on\n", s.prev.Header.SessionID)
		} else {
			fmt.Fprintf(s.a.Stderr, "troupe: resumed session %s was recorded without coordinator mode; coordinator mode off\n", s.prev.Header.SessionID)
		}
	}
	return rec
}

// record starts the record of this run: a new session file, or the
// resumed one appended to. A session that cannot be recorded is said on
// stderr; the run goes on.
func (s *sessions) record(id, cwd string, coord bool, info llm.Info, model string) *record.Log {
	l, err := s.open(id, cwd, coord, info, model)
	if err != nil {
		fmt.Fprintf(s.a.Stderr, "troupe: the session is not recorded: %v\n", err)
		return nil
	}
	return l
}

func (s *sessions) open(id, cwd string, coord bool, info llm.Info, model string) (*record.Log, error) {
	if s.prev != nil {
		var reset []llm.Message
		if s.reset {
			reset = s.history
		}
		return record.Append(s.path, s.prev, reset, s.a.Stderr)
	}
	if s.dir == "" {
		return nil, s.dirErr
	}
	return record.Create(s.dir, record.Line{SessionID: id, Cwd: cwd, Coordinator: coord, Provider: info.Provider, Model: model,
		Time: s.a.Now().UTC().Format(time.RFC3339Nano)}, s.a.Stderr)
}

// transcriptsFor returns where the agents of a session keep their
// transcripts; nil when the home cannot be resolved.
func (a *app) transcriptsFor(session string) *kit.Transcripts {
	home, err := a.Home()
	if err != nil {
		return nil
	}
	return kit.NewTranscripts(home, session, a.Now, a.Stderr)
}

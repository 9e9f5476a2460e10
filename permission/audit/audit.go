// Package audit records permission decisions: one JSON object a line,
// appended to a file.
//
// A Log is safe for concurrent use: each entry is written with a single
// write under a mutex to a file opened for appending, so lines from one
// Log never interleave (and lines from several processes appending to
// one file stay whole on local file systems).
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/permission"
)

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("audit: closed")

// MaxInput bounds Entry.Input, in bytes.
const MaxInput = 512

// Entry is one audited decision.
type Entry struct {
	Time     time.Time           `json:"time"`
	Agent    string              `json:"agent,omitempty"`
	Tool     string              `json:"tool"`
	Input    string              `json:"input"` // a summary: the command, the path or the compact JSON input
	Decision permission.Behavior `json:"decision"`
	Rule     string              `json:"rule,omitempty"`
	Source   string              `json:"source,omitempty"` // the rule's file
	Mode     permission.Mode     `json:"mode,omitempty"`
	Reason   string              `json:"reason,omitempty"`
}

// NewEntry builds the entry for a decision on req. It is pure: the
// caller supplies the time.
func NewEntry(now time.Time, agent string, req permission.Request, d permission.Decision) Entry {
	e := Entry{Time: now, Agent: agent, Tool: req.Tool, Input: Summary(req.Tool, req.Input),
		Decision: d.Behavior, Mode: req.Mode, Reason: d.Reason}
	if d.Rule != nil {
		e.Rule, e.Source = d.Rule.String(), d.Rule.Source
	}
	return e
}

// Summary returns a short description of a tool input: a Bash command,
// a file path, a URL, a search query or pattern, or the compact JSON,
// cut to MaxInput bytes.
func Summary(tool string, input json.RawMessage) string {
	var in map[string]any
	s := string(input)
	if json.Unmarshal(input, &in) == nil {
		for _, k := range []string{"command", "file_path", "notebook_path", "url", "query", "pattern", "path"} {
			if v, ok := in[k].(string); ok && v != "" {
				s = v
				break
			}
		}
	}
	if len(s) > MaxInput {
		cut := MaxInput
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Log appends entries to a file.
type Log struct {
	now func() time.Time

	mu sync.Mutex
	f  *os.File // guarded by mu; nil after Close
}

// Open opens (creating if needed, mode 0600) the audit file at path for
// appending. now stamps entries without a time; nil means time.Now.
func Open(path string, now func() time.Time) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Log{now: now, f: f}, nil
}

// Record appends e as one JSON line. A zero Time is set to now.
func (l *Log) Record(e Entry) error {
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	return l.Append(e)
}

// Append appends v, another kind of entry (such as a hook run, which
// carries "kind": "hook"), as one JSON line.
func (l *Log) Append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Close closes the file. It is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

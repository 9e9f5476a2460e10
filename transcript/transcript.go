// Package transcript keeps what every agent of a session did: one JSON
// Lines file per agent under the session's folder,
//
//	<home>/sessions/<session-id>/<agent>.jsonl   (mode 0600, folder 0700)
//
// starting with a header line ({"type":"transcript", the agent, its kind,
// its parent for a sub-agent's sidechain, the session, the time}) followed
// by the agent's events as package agent writes them (Config.Transcript):
// user and assistant messages, tool calls and results, retries,
// compactions, the end of each run. Lines are appended as the agent works,
// so a crash leaves a readable prefix; a torn last line is ignored when
// reading.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/internal/jsonl"
)

// Kinds of agents.
const (
	KindLead     = "lead"
	KindTeammate = "teammate"
	KindSubAgent = "sub-agent"
	KindWorker   = "worker" // a coordinator's worker
	KindRemote   = "remote" // a remote job
)

// maxLine bounds one line of a transcript.
const maxLine = 64 << 20

// Header is a transcript's first line.
type Header struct {
	Type    string `json:"type"` // "transcript"
	Agent   string `json:"agent"`
	Kind    string `json:"kind"`
	Parent  string `json:"parent,omitempty"` // the agent whose sidechain this is
	Session string `json:"session_id"`
	Time    string `json:"time"`
}

// Line is one event line of a transcript, as package agent writes it.
type Line = agent.TranscriptLine

// Dir is the folder of a session's transcripts.
func Dir(home, session string) string { return filepath.Join(home, "sessions", session) }

// FileName is the file of agent's transcript in its session's folder: the
// name with anything but letters, digits, '-', '_' and '.' replaced.
func FileName(agent string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, strings.TrimLeft(agent, ".")) + ".jsonl"
}

// Create opens (appending) the transcript of h.Agent in dir, writing its
// header when the file is new. The caller closes it.
func Create(dir string, h Header, now time.Time) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	path := filepath.Join(dir, FileName(h.Agent))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		return f, nil // resumed: the header is there
	}
	h.Type, h.Time = "transcript", now.UTC().Format(time.RFC3339Nano)
	b, _ := json.Marshal(h)
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return f, nil
}

// Transcript is a read transcript.
type Transcript struct {
	Path   string
	Header Header
	Lines  []Line
	// Size is the length of its complete lines (where a follower goes on).
	Size int64
}

// Parse reads a transcript from r. A torn last line (no newline) is
// ignored; any other line that is not JSON is an error naming it.
func Parse(r io.Reader) (Transcript, error) {
	var t Transcript
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		b, err := jsonl.ReadLine(br, maxLine)
		if errors.Is(err, jsonl.ErrTooLong) {
			return t, fmt.Errorf("line %d: %w", n+1, err)
		}
		if err == io.EOF {
			return t, nil // a torn line (or none)
		}
		if err != nil {
			return t, err
		}
		n++
		t.Size += int64(len(b))
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		if n == 1 {
			if err := json.Unmarshal(b, &t.Header); err != nil || t.Header.Type != "transcript" {
				return t, fmt.Errorf("line 1: not a transcript header")
			}
			continue
		}
		var l Line
		if err := json.Unmarshal(b, &l); err != nil {
			return t, fmt.Errorf("line %d: %v", n, err)
		}
		t.Lines = append(t.Lines, l)
	}
}

// Read reads the transcript at path.
func Read(path string) (Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return Transcript{}, err
	}
	defer f.Close()
	t, err := Parse(f)
	t.Path = path
	if err != nil {
		return t, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Session lists the transcripts of a session's folder: the lead's first,
// then the others by name.
func Session(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		la, lb := filepath.Base(a) == FileName(KindLead), filepath.Base(b) == FileName(KindLead)
		switch {
		case la && !lb:
			return -1
		case lb && !la:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// ErrNotFound says no transcript matches.
var ErrNotFound = errors.New("transcript: not found")

// Find returns the transcript files for idOrName under home: a session id
// gives its folder's transcripts (lead first); an agent name gives that
// agent's transcript in the newest session that has one.
func Find(home, idOrName string) ([]string, error) {
	root := filepath.Join(home, "sessions")
	if dir := filepath.Join(root, idOrName); idOrName != "" && !strings.ContainsAny(idOrName, `/\`) {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return Session(dir)
		}
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no sessions in %s", ErrNotFound, root)
		}
		return nil, err
	}
	var best string
	var bestTime time.Time
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(root, e.Name(), FileName(idOrName))
		if st, err := os.Stat(p); err == nil && st.ModTime().After(bestTime) {
			best, bestTime = p, st.ModTime()
		}
	}
	if best == "" {
		return nil, fmt.Errorf("%w: %q is neither a session id in %s nor an agent with a transcript there", ErrNotFound, idOrName, root)
	}
	return []string{best}, nil
}

// Appender returns a writer for agent.Config.Transcript that appends each
// line to the transcript of h.Agent in dir, opening and closing the file
// for each write, so that nothing needs closing however many agents a
// session starts. The file and its header are created now.
func Appender(dir string, h Header, now time.Time) (io.Writer, error) {
	f, err := Create(dir, h, now)
	if err != nil {
		return nil, err
	}
	path := f.Name()
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return appender(path), nil
}

type appender string

// Write appends p (one or more whole lines) in one write.
func (a appender) Write(p []byte) (int, error) {
	f, err := os.OpenFile(string(a), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	n, werr := f.Write(p)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return n, werr
}

// Tail reads the lines of the transcript at path from offset off (0: the
// whole file, whose header line is checked and skipped) and returns them
// with the offset after the last complete line, where the next Tail goes
// on. A torn last line is left for then. A file shorter than off (it was
// replaced) is read again from the start.
func Tail(path string, off int64) ([]Line, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < off {
		off = 0
	}
	if off == 0 {
		t, err := Parse(f)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		return t.Lines, t.Size, nil
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var out []Line
	for {
		b, err := jsonl.ReadLine(br, maxLine)
		if errors.Is(err, jsonl.ErrTooLong) {
			return out, off, fmt.Errorf("%s at byte %d: %w", path, off, err)
		}
		if err == io.EOF {
			return out, off, nil
		}
		if err != nil {
			return out, off, err
		}
		n := int64(len(b))
		if b = bytes.TrimSpace(b); len(b) > 0 {
			var l Line
			if err := json.Unmarshal(b, &l); err != nil {
				return out, off, fmt.Errorf("%s at byte %d: %v", path, off, err)
			}
			out = append(out, l)
		}
		off += n
	}
}

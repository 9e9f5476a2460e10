// Package ledger keeps a session's spending on disk: one JSON line per
// model call, in the session's folder beside its transcripts,
//
//	<home>/sessions/<session-id>/usage.ndjson   (mode 0600, folder 0700)
//
// with the time, the agent, the model, its tokens and its cost at the
// prices of the time ({"time":…,"agent":"alice","model":…,"usage":{…},
// "usd":0.0123}; "usd" is left out when the model had no price). The lead
// and its in-process teammates append to it, and so do pane teammates
// started for the session, each line in one write to a file opened for
// appending, so that lines from several processes never interleave.
// `troupe usage` sums it (Summarize).
//
// Reading tolerates a torn last line (a crash in the middle of a write);
// any other line that is not a record is an error naming it, and nothing
// read is lost by it.
package ledger

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/budget"
	"github.com/troupe-dev/troupe/internal/jsonl"
)

// FileName is the ledger's name in a session's folder. It does not end in
// .jsonl, which marks the folder's transcripts.
const FileName = "usage.ndjson"

// maxLine bounds one line of a ledger.
const maxLine = 64 << 10

// Entry is one line of a ledger.
type Entry struct {
	Time time.Time `json:"time"`
	budget.Record
	// Origin names the Writer (one per process) that wrote the line, so
	// that a process following the ledger (Tailer) skips its own.
	Origin string `json:"origin,omitempty"`
}

// Writer appends records to a ledger file. It is safe for concurrent use.
type Writer struct {
	path   string
	now    func() time.Time
	origin string

	mu  sync.Mutex // serializes this process's writes
	err error      // guarded by mu; the first failed write
}

// Open creates dir (the session's folder) when needed and returns a Writer
// appending to its ledger; now stamps the lines (time.Now when nil).
func Open(dir string, now func() time.Time) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Writer{path: path, now: now, origin: rand.Text()[:12]}, nil
}

// Path returns the ledger file's path.
func (w *Writer) Path() string { return w.path }

// Origin returns the name this Writer stamps on its lines.
func (w *Writer) Origin() string { return w.origin }

// Record appends r as one line (budget.Config.Record). A failed write is
// kept for Err; the run goes on.
func (w *Writer) Record(r budget.Record) {
	b, err := json.Marshal(Entry{Time: w.now().UTC(), Record: r, Origin: w.origin})
	if err != nil {
		w.fail(err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		w.failLocked(err)
		return
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.failLocked(err)
	}
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failLocked(err)
}

func (w *Writer) failLocked(err error) {
	if w.err == nil {
		w.err = fmt.Errorf("ledger %s: %w", w.path, err)
	}
}

// Err returns the first write that failed, nil when every one succeeded.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// ErrMalformed marks a ledger line that is not a record.
var ErrMalformed = errors.New("ledger: malformed line")

// Parse reads a ledger's entries from r. A torn last line is ignored;
// another line that is not a record is an error (matching ErrMalformed)
// naming its number, returned with the entries read before it.
func Parse(r io.Reader) ([]Entry, error) {
	var out []Entry
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		b, err := jsonl.ReadLine(br, maxLine)
		if errors.Is(err, jsonl.ErrTooLong) {
			return out, fmt.Errorf("%w %d: %w", ErrMalformed, n, err)
		}
		if err == io.EOF {
			return out, nil // a torn line, or none
		}
		if err != nil {
			return out, err
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return out, fmt.Errorf("%w %d: %v", ErrMalformed, n, err)
		}
		if err := e.check(); err != nil {
			return out, fmt.Errorf("%w %d: %v", ErrMalformed, n, err)
		}
		out = append(out, e)
	}
}

func (e Entry) check() error {
	u := e.Usage
	switch {
	case e.Agent == "":
		return errors.New("no agent")
	case u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0:
		return errors.New("a negative token count")
	case e.USD != nil && (*e.USD < 0 || *e.USD != *e.USD):
		return fmt.Errorf("cost %v is not an amount", *e.USD)
	}
	return nil
}

// Read reads the ledger of the session folder dir; a folder without one
// has no entries.
func Read(dir string) ([]Entry, error) {
	f, err := os.Open(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	es, err := Parse(f)
	if err != nil {
		return es, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return es, nil
}

// Summary is a ledger summed up.
type Summary struct {
	Total   budget.Spend            `json:"total"`
	ByAgent map[string]budget.Spend `json:"by_agent"`
	ByModel map[string]budget.Spend `json:"by_model"`
	// First and Last are the times of the first and last calls.
	First, Last time.Time `json:"-"`
}

// Agents returns the agents of s, most expensive first (then by name).
func (s Summary) Agents() []string {
	names := make([]string, 0, len(s.ByAgent))
	for n := range s.ByAgent {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		sa, sb := s.ByAgent[a], s.ByAgent[b]
		switch {
		case sa.USD != sb.USD:
			if sa.USD > sb.USD {
				return -1
			}
			return 1
		case sa.Tokens() != sb.Tokens():
			if sa.Tokens() > sb.Tokens() {
				return -1
			}
			return 1
		}
		return bytes.Compare([]byte(a), []byte(b))
	})
	return names
}

// Summarize sums entries by agent and by model, at the costs they were
// recorded with.
func Summarize(es []Entry) Summary {
	s := Summary{ByAgent: map[string]budget.Spend{}, ByModel: map[string]budget.Spend{}}
	for _, e := range es {
		usd, priced := 0.0, e.USD != nil
		if priced {
			usd = *e.USD
		}
		add := func(sp budget.Spend) budget.Spend { return sp.Add(e.Model, e.Usage, usd, priced) }
		s.Total = add(s.Total)
		s.ByAgent[e.Agent] = add(s.ByAgent[e.Agent])
		s.ByModel[e.Model] = add(s.ByModel[e.Model])
		if s.First.IsZero() || e.Time.Before(s.First) {
			s.First = e.Time
		}
		if e.Time.After(s.Last) {
			s.Last = e.Time
		}
	}
	return s
}

// Tailer reads the lines appended to a ledger since it last looked. It is
// safe for concurrent use.
type Tailer struct {
	path string

	mu  sync.Mutex
	off int64 // guarded by mu: the end of the last complete line read
}

// NewTailer returns a Tailer of the ledger at path from its current end:
// what was there before is not its to report.
func NewTailer(path string) *Tailer {
	t := &Tailer{path: path}
	if st, err := os.Stat(path); err == nil {
		t.off = st.Size()
	}
	return t
}

// Next returns the complete lines appended since the last call (a torn
// last line waits for its end). A malformed line is skipped with the
// error (matching ErrMalformed) and the lines after it still come.
func (t *Tailer) Next() ([]Entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st, err := os.Stat(t.path); err == nil && st.Size() <= t.off {
		return nil, nil // nothing new: a stat, no open (the common case)
	}
	f, err := os.Open(t.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= t.off {
		return nil, err
	}
	b := make([]byte, st.Size()-t.off)
	n, err := f.ReadAt(b, t.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	b = b[:n]
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil, nil
	}
	t.off += int64(end + 1)
	var out []Entry
	var errs []error
	for i, line := range bytes.Split(b[:end], []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			errs = append(errs, fmt.Errorf("%w (appended line %d): %v", ErrMalformed, i+1, err))
			continue
		}
		if err := e.check(); err != nil {
			errs = append(errs, fmt.Errorf("%w (appended line %d): %v", ErrMalformed, i+1, err))
			continue
		}
		out = append(out, e)
	}
	return out, errors.Join(errs...)
}

package workflow

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/atomicfile"
)

// Files of a run's folder.
const (
	ScriptFile  = "script.js"
	JournalFile = "journal.jsonl"
	OutputFile  = "output.log" // the log lines, then the result
	ResultFile  = "result.json"
	RunFile     = "run.json"
)

// ErrNoRun is wrapped when a run id names no run folder.
var ErrNoRun = errors.New("workflow: no such run")

var runIDPattern = regexp.MustCompile(`^wf_[0-9a-z]{12}$`)

// NewRunID returns a fresh run id: wf_ and 12 base-36 characters.
func NewRunID() string {
	const base36 = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := []byte("wf_")
	var buf [32]byte
	for len(b) < 15 {
		rand.Read(buf[:])
		for _, c := range buf {
			if c < 252 && len(b) < 15 {
				b = append(b, base36[c%36])
			}
		}
	}
	return string(b)
}

// ValidRunID reports whether id has the shape of a run id (so that it
// is safe as a folder name).
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) }

// RunInfo is run.json: what a run was and how it ended.
type RunInfo struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
	ResumedFrom string          `json:"resumedFrom,omitempty"`
	Status      string          `json:"status"` // running, completed, failed, killed
	Error       string          `json:"error,omitempty"`
	Started     time.Time       `json:"started"`
	Ended       time.Time       `json:"ended,omitzero"`
	Agents      int             `json:"agents"`
	Cached      int             `json:"cached"`
	Failed      int             `json:"failed"`
	Usage       Usage           `json:"usage"`
}

// Dir is a run's folder. Its methods are safe for concurrent use.
type Dir struct {
	Path string

	// mu guards the open files below.
	mu      sync.Mutex
	journal *os.File
	output  *os.File
}

// CreateDir makes the folder of run id under root, with the script in it.
func CreateDir(root, id string, src string) (*Dir, error) {
	if !ValidRunID(id) {
		return nil, fmt.Errorf("create run folder: bad run id %q", id)
	}
	p := filepath.Join(root, id)
	if err := os.MkdirAll(p, 0o700); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(p, ScriptFile), []byte(src), 0o600, atomicfile.Options{}); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	d := &Dir{Path: p}
	var err error
	if d.journal, err = os.OpenFile(filepath.Join(p, JournalFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	if d.output, err = os.OpenFile(filepath.Join(p, OutputFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600); err != nil {
		d.journal.Close()
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	return d, nil
}

// RunPath returns the folder of run id under root, or an error wrapping
// ErrNoRun.
func RunPath(root, id string) (string, error) {
	if !ValidRunID(id) {
		return "", fmt.Errorf("%w: %q is not a run id (wf_ and 12 characters)", ErrNoRun, id)
	}
	p := filepath.Join(root, id)
	if _, err := os.Stat(filepath.Join(p, ScriptFile)); err != nil {
		return "", fmt.Errorf("%w: %s in %s", ErrNoRun, id, root)
	}
	return p, nil
}

// LoadJournal reads the journal of the run at path (a missing journal
// is an empty one).
func LoadJournal(path string) ([]Entry, error) {
	f, err := os.Open(filepath.Join(path, JournalFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJournal(f)
}

// Record appends e to the journal, one line, synced: a run killed after
// it loses nothing of e.
func (d *Dir) Record(e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.journal.Write(append(b, '\n')); err != nil {
		return err
	}
	return d.journal.Sync()
}

// Output appends a line to the output file.
func (d *Dir) Output(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.output.WriteString(strings.TrimRight(line, "\n") + "\n")
}

// OutputPath returns the output file's path.
func (d *Dir) OutputPath() string { return filepath.Join(d.Path, OutputFile) }

// WriteInfo writes run.json.
func (d *Dir) WriteInfo(info RunInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(d.Path, RunFile), append(b, '\n'), 0o600, atomicfile.Options{})
}

// Finish writes the result (a value as JSON, or nil) and run.json, and
// closes the files.
func (d *Dir) Finish(info RunInfo, value json.RawMessage) error {
	var errs []error
	if value != nil {
		errs = append(errs, atomicfile.WriteFile(filepath.Join(d.Path, ResultFile), append(append([]byte{}, value...), '\n'), 0o600, atomicfile.Options{}))
	}
	errs = append(errs, d.WriteInfo(info))
	d.mu.Lock()
	errs = append(errs, d.journal.Close(), d.output.Close())
	d.mu.Unlock()
	return errors.Join(errs...)
}

// ListRuns returns the runs under root, newest first (a folder without a
// readable run.json is left out).
func ListRuns(root string) ([]RunInfo, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RunInfo
	for _, e := range ents {
		if !e.IsDir() || !ValidRunID(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name(), RunFile))
		if err != nil {
			continue
		}
		var ri RunInfo
		if json.Unmarshal(b, &ri) == nil {
			out = append(out, ri)
		}
	}
	slices.SortFunc(out, func(a, b RunInfo) int { return b.Started.Compare(a.Started) })
	return out, nil
}

package workflow

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Entry is one settled agent() call of a run: a line of its journal.
type Entry struct {
	// Index is the call's position (0 for the first agent() call).
	Index  int    `json:"index"`
	Digest string `json:"digest"` // Digest(prompt, opts)
	Label  string `json:"label,omitempty"`
	Phase  string `json:"phase,omitempty"` // the call's phase, for a view of the run (Snapshot)
	// AgentID is the agent's id as its runner reported it (its transcript's
	// name); "" for a cached answer or a runner that reports none.
	AgentID string `json:"agentId,omitempty"`
	// Result is the call's value as JSON (a string for a text answer);
	// Error is set instead when it rejected.
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Usage  Usage           `json:"usage"`
	Cached bool            `json:"cached,omitempty"` // answered from an earlier run's journal
	// Seq is the entry's line in its journal: the order the calls settled
	// in, which a resume replays (ReadJournal sets it).
	Seq int `json:"-"`
}

// MaxJournalLine bounds one journal line (a result of an agent).
const MaxJournalLine = 16 << 20

// ReadJournal reads a journal: JSON lines of Entry, in the order the calls
// settled (kept as Seq). A line that does not parse (a run killed mid-write leaves a
// partial last line) ends the journal there; an entry whose index repeats
// an earlier one's keeps the earlier. The entries come back sorted by
// index.
func ReadJournal(r io.Reader) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxJournalLine)
	seen := map[int]bool{}
	var out []Entry
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil || e.Index < 0 || e.Digest == "" {
			break
		}
		if e.Error == "" && (len(e.Result) == 0 || !json.Valid(e.Result)) {
			break
		}
		if seen[e.Index] {
			continue
		}
		seen[e.Index] = true
		e.Seq = len(out)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil && err != bufio.ErrTooLong {
		return out, fmt.Errorf("read journal: %w", err)
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.Index - b.Index })
	return out, nil
}

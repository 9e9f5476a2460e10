package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Every message the benchmarks write, troupe's and the peer's alike, starts
// its text with "<id>", so that an inbox can be checked against the sends
// whatever wrote it.

// TextID returns the id at the start of a benchmark message's text.
func TextID(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "<")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ">")
	return id, ok && id != ""
}

// Filler returns a text of n bytes (at least the id and a space) that starts
// with id: the peer's workload (lib.js fillerText).
func Filler(id string, n int) string {
	const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
	var b strings.Builder
	b.WriteString(id)
	b.WriteByte(' ')
	for b.Len() < n {
		b.WriteString(lorem)
	}
	s := b.String()
	if len(s) > n && n > len(id) {
		s = s[:n]
	}
	return s
}

// Tally is the check of one inbox against the sends that targeted it.
type Tally struct {
	// Entries is the number of entries in the final inbox.
	Entries int `json:"entries"`
	// Stored counts distinct attempted ids found in the inbox.
	Stored int `json:"stored"`
	// Lost counts acknowledged sends whose message is missing.
	Lost int `json:"lost"`
	// Duplicates counts ids found more than once.
	Duplicates int `json:"duplicates"`
	// Phantoms counts entries no one attempted (or without an id).
	Phantoms int `json:"phantoms"`
	// StoredAfterError counts sends that reported an error, yet whose
	// message is in the inbox.
	StoredAfterError int `json:"stored_after_error"`
	// Examples names a few offending ids, for the report.
	Examples []string `json:"examples,omitempty"`
}

// Clean reports whether nothing was lost, duplicated or invented, and no
// failed send landed.
func (t Tally) Clean() bool {
	return t.Lost == 0 && t.Duplicates == 0 && t.Phantoms == 0 && t.StoredAfterError == 0
}

const maxExamples = 5

// Verify compares the ids found in an inbox (in file order; "" for an entry
// without an id) with the sends: sent maps every attempted id to whether its
// send was acknowledged. Preloaded messages belong in sent as acknowledged,
// so that losing one counts too.
func Verify(sent map[string]bool, found []string) Tally {
	t := Tally{Entries: len(found)}
	count := make(map[string]int, len(found))
	for _, id := range found {
		count[id]++
	}
	example := func(kind, id string) {
		if len(t.Examples) < maxExamples {
			t.Examples = append(t.Examples, kind+" "+id)
		}
	}
	ids := make([]string, 0, len(count))
	for id := range count {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		n := count[id]
		acked, attempted := sent[id]
		switch {
		case id == "" || !attempted:
			t.Phantoms += n
			example("phantom", fmt.Sprintf("%q", id))
			continue
		case !acked:
			t.StoredAfterError++
			example("stored-after-error", id)
		}
		t.Stored++
		if n > 1 {
			t.Duplicates++
			example("duplicate", id)
		}
	}
	var lost []string
	for id, acked := range sent {
		if acked && count[id] == 0 {
			lost = append(lost, id)
		}
	}
	slices.Sort(lost)
	t.Lost = len(lost)
	for _, id := range lost {
		example("lost", id)
	}
	return t
}

// InboxFile is what ReadInbox found in an inbox file.
type InboxFile struct {
	IDs   []string // one per entry, in file order
	Bytes int64
}

// ReadInbox parses an inbox file strictly: it must be a JSON array of
// objects whose "text" is a string. It returns the id of every entry.
func ReadInbox(path string) (InboxFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return InboxFile{}, fmt.Errorf("read inbox: %w", err)
	}
	var entries []struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return InboxFile{Bytes: int64(len(data))}, fmt.Errorf("inbox %s is not a valid JSON array of entries: %w", path, err)
	}
	out := InboxFile{IDs: make([]string, len(entries)), Bytes: int64(len(data))}
	for i, e := range entries {
		if e.Text == nil {
			return out, fmt.Errorf("inbox %s: entry %d has no text", path, i)
		}
		out.IDs[i], _ = TextID(*e.Text)
	}
	return out, nil
}

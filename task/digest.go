package task

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Bounds of what OutputDigest.Take attaches per task.
const (
	DigestLines = 20
	DigestBytes = 2 << 10
)

// OutputDigest tells one agent, with each of its model inputs, what its
// running background shells printed since the last input: the seed's
// polled output (generateTaskAttachments), turned into a short note so
// the model sees progress without calling TaskOutput. It follows its own
// offsets (the registry's poll offsets belong to the UI). It is safe for
// concurrent use.
type OutputDigest struct {
	reg     *Registry
	agentID string

	mu      sync.Mutex
	offsets map[ID]int64 // how far each task was told
}

// NewOutputDigest returns the digest of the shells agentID started ("" for
// the registry's own agent: the lead, or a teammate on its registry).
// Monitors and their shells are left out: they wake the agent themselves.
func (r *Registry) NewOutputDigest(agentID string) *OutputDigest {
	return &OutputDigest{reg: r, agentID: agentID, offsets: map[ID]int64{}}
}

// Take returns the note for the agent's next model input, "" when none of
// its running shells printed anything since the last Take: for each, its
// id, description and its new output's last DigestLines lines within
// DigestBytes (the text XML-escaped, a cut marked), inside a
// <system-reminder>.
func (d *OutputDigest) Take() string {
	var parts []string
	d.mu.Lock()
	defer d.mu.Unlock()
	live := map[ID]bool{}
	for _, s := range d.reg.List() {
		sh, ok := s.Detail.(*Shell)
		if !ok || s.Status != Running || sh.AgentID != d.agentID || sh.Kind == "monitor" || s.OutputFile == "" {
			continue
		}
		live[s.ID] = true
		fi, err := os.Lstat(s.OutputFile)
		if err != nil {
			continue
		}
		off := d.offsets[s.ID]
		size := fi.Size()
		if size <= off {
			continue
		}
		from := max(off, size-DigestBytes)
		rd, err := ReadOutputAt(s.OutputFile, from, size-from)
		if err != nil || len(rd.Data) == 0 {
			continue
		}
		d.offsets[s.ID] = rd.End()
		text, cut := digestTail(rd.Data, rd.Offset > off)
		if strings.TrimSpace(text) == "" {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<task-output>\n<task-id>%s</task-id>\n<summary>", s.ID)
		xmlEscaper.WriteString(&b, fmt.Sprintf("Background command %q is running; new output:", s.Description))
		b.WriteString("</summary>\n<new-output>")
		if cut {
			b.WriteString("…\n")
		}
		xmlEscaper.WriteString(&b, text)
		b.WriteString("</new-output>\n</task-output>")
		parts = append(parts, b.String())
	}
	for id := range d.offsets {
		if !live[id] {
			delete(d.offsets, id) // ended: its notification has its tail
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "<system-reminder>\nYour background commands printed this since your last turn (the last lines of each; TaskOutput reads the whole output). This is not user input.\n" +
		strings.Join(parts, "\n") + "\n</system-reminder>"
}

// digestTail returns the last DigestLines lines of data (NUL bytes
// dropped, invalid UTF-8 replaced), and whether anything before them was
// left out; partial says data begins in the middle of a line.
func digestTail(data []byte, partial bool) (string, bool) {
	cut := false
	if partial {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
		cut = true
	}
	body := bytes.TrimRight(data, "\n")
	lines := bytes.Split(body, []byte("\n"))
	if len(lines) > DigestLines {
		lines = lines[len(lines)-DigestLines:]
		cut = true
	}
	t := string(bytes.Join(lines, []byte("\n")))
	return strings.ToValidUTF8(strings.ReplaceAll(t, "\x00", ""), "\uFFFD"), cut
}

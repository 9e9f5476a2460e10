package task

import (
	"bytes"
	"regexp"
	"time"
)

// promptRE matches a last output line that looks like an interactive
// prompt waiting for input.
var promptRE = regexp.MustCompile(`(?i)(\((y|yes)/(n|no)\)|\[(y|yes)/(n|no)\]|press (enter|return|any key)|(password|passphrase)[^:]*:\s*$|continue\?|proceed\?|are you sure|overwrite\?|\(y\)es|\[default[^\]]*\]:?\s*$)`)

// LooksLikePrompt reports whether the last non-empty line of out looks
// like an interactive prompt ("(y/n)", "[Y/n]", "Press Enter",
// "password:", "Continue?" ...). It is a pure function.
func LooksLikePrompt(out []byte) bool {
	line := LastLine(out)
	return len(line) > 0 && promptRE.Match(line)
}

// LastLine returns the last non-blank line of out, trimmed.
func LastLine(out []byte) []byte {
	out = bytes.TrimRight(out, " \t\r\n")
	if i := bytes.LastIndexAny(out, "\r\n"); i >= 0 {
		out = out[i+1:]
	}
	return bytes.TrimSpace(out)
}

// stallWatch is the stall watchdog's memory of one task.
type stallWatch struct {
	size       int64     // output size at the last check
	lastGrowth time.Time // when size last grew (or the watch began)
	told       bool      // the model was told; never again
}

// check records an output size seen at now and reports whether the task
// is suspect: no growth for at least after, and not yet told. The caller
// then looks at the last line (LooksLikePrompt) and, if it is a prompt,
// tells the model and sets told. It is a pure function.
func (w stallWatch) check(size int64, now time.Time, after time.Duration) (stallWatch, bool) {
	if size != w.size {
		w.size, w.lastGrowth = size, now
		return w, false
	}
	return w, !w.told && now.Sub(w.lastGrowth) >= after
}

// stallTail is how much of the end of the output the watchdog reads.
const stallTail = 1024

// stallNotification is what the model is told about a shell that seems to
// wait for input. It is a pure function.
func stallNotification(s State, last []byte) Notification {
	return Notification{
		TaskID: s.ID, ToolUseID: s.ToolUseID, Type: s.Type, OutputFile: s.OutputFile,
		Summary: `Background command "` + s.Description + `" appears to be waiting for interactive input`,
		Note: "Its output has not grown for a while and its last line looks like a prompt: " + string(last) +
			"\nIt cannot receive input. Stop it (TaskStop) and run it non-interactively (for example with a --yes flag or input piped in).",
	}
}

package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/internal/termtext"
)

// A tool call reads as an action: "Update(calc.go)", "Bash(go test
// ./...)", "Read(calc.go)", with its outcome after it ("+3 −1", "ok",
// "42 lines"), paths relative to the working folder.

// toolInput is a tool call's input, decoded loosely.
type toolInput map[string]any

func decodeInput(raw json.RawMessage) toolInput {
	var in toolInput
	_ = json.Unmarshal(raw, &in)
	return in
}

func (in toolInput) str(k string) string { s, _ := in[k].(string); return s }

// shownName is the name a call is shown under: an edit is an Update.
func shownName(tool string) string {
	switch tool {
	case "Edit", "MultiEdit":
		return "Update"
	}
	return tool
}

// relPath writes p relative to dir when it is inside it.
func relPath(dir, p string) string {
	if dir == "" || !filepath.IsAbs(p) {
		return p
	}
	if r, err := filepath.Rel(dir, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return p
}

// toolTitle is a call in one line: "Update(calc.go)", "Bash(go test
// ./...)".
func toolTitle(dir, name string, raw json.RawMessage) string {
	if name == ask.ToolName { // its first question
		var qs ask.Input
		_ = json.Unmarshal(raw, &qs)
		return shownName(name) + "(" + firstLineOf(ask.Summary(qs.Questions)) + ")"
	}
	in := decodeInput(raw)
	for _, k := range []string{"command", "file_path", "notebook_path", "pattern", "path", "url", "query", "subject", "to", "name", "skill", "team_name", "description", "prompt", "taskId", "action"} {
		if v := in.str(k); v != "" {
			switch k {
			case "taskId":
				v = "#" + v
			case "file_path", "notebook_path", "path":
				v = relPath(dir, v)
			}
			return shownName(name) + "(" + firstLineOf(v) + ")"
		}
	}
	return shownName(name)
}

// toolSummary is toolTitle without a working folder.
func toolSummary(name string, raw json.RawMessage) string { return toolTitle("", name, raw) }

// toolOutcome says what a finished call did, briefly: "+3 −1" for an
// edit, "42 lines" for a read or a write, the first line of a command's
// output ("ok" when it printed nothing), else the result's first line.
func toolOutcome(name string, raw json.RawMessage, result string, failed bool) string {
	if failed {
		return firstLineOf(result)
	}
	in := decodeInput(raw)
	switch name {
	case "Edit":
		add, del := diffCounts(lineDiff(splitLines(in.str("old_string")), splitLines(in.str("new_string"))))
		return fmt.Sprintf("+%d −%d", add, del)
	case "MultiEdit":
		add, del := 0, 0
		edits, _ := in["edits"].([]any)
		for _, e := range edits {
			em, _ := e.(map[string]any)
			o, _ := em["old_string"].(string)
			n, _ := em["new_string"].(string)
			a, d := diffCounts(lineDiff(splitLines(o), splitLines(n)))
			add, del = add+a, del+d
		}
		return fmt.Sprintf("+%d −%d", add, del)
	case "Write":
		return plural(len(splitLines(in.str("content"))), "line")
	case "Read":
		return plural(len(splitLines(result)), "line")
	case "Bash":
		if strings.TrimSpace(result) == "" {
			return "ok"
		}
	}
	return firstLineOf(result)
}

// inputLines shows a call's input whole, formatted: a command with its
// lines and indentation and its description, background flag and
// folder; an edit as a diff; a write's content; any other input as
// indented JSON; wrapped to w, never cut, drawn through the
// terminal-text sanitizer. file is the edited file as it is on disk (nil
// when not read): an edit or a write is then a unified diff against it
// with 3 lines of context and line numbers.
func inputLines(st styles, dir, tool string, raw json.RawMessage, w int, file *fileText) []string {
	in := decodeInput(raw)
	var out []string
	switch tool {
	case "Bash":
		out = textLines("  $ ", "    ", in.str("command"), w, plain)
		if d := in.str("description"); d != "" {
			out = append(out, textLines("  description: ", "  ", d, w, st.dim)...)
		}
		if bg, _ := in["run_in_background"].(bool); bg {
			out = append(out, st.warn("  runs in the background (run_in_background)"))
		}
		if dir != "" {
			out = append(out, textLines("  in ", "  ", dir, w, st.dim)...)
		}
	case "Edit", "MultiEdit", "Write":
		out = editLines(st, dir, tool, in, w, file)
	case "NotebookEdit":
		mode := in.str("edit_mode")
		if mode == "" {
			mode = "replace"
		}
		head := relPath(dir, in.str("notebook_path")) + ": " + mode + " cell " + in.str("cell_id")
		if t := in.str("cell_type"); t != "" {
			head += " (" + t + ")"
		}
		out = textLines("  ", "  ", head, w, plain)
		if mode != "delete" {
			out = append(out, textLines("  + ", "  + ", in.str("new_source"), w, st.good)...)
		}
	case "EnterPlanMode":
		out = textLines("  ", "  ", "switch the session to plan mode: read-only until you approve a plan", w, plain)
	case "EnterWorktree":
		branch := "worktree/" + in.str("name")
		if in.str("name") == "" {
			branch = "a new worktree/ branch"
		}
		out = textLines("  ", "  ", "move the session into a new git worktree on "+branch, w, plain)
	case "ExitWorktree":
		what := "leave the worktree, keeping it and its branch"
		if in.str("action") == "remove" {
			what = "leave the worktree and remove it with its branch"
			if d, _ := in["discard_changes"].(bool); d {
				what += ", DISCARDING uncommitted changes and unmerged commits"
			}
		}
		out = textLines("  ", "  ", what, w, plain)
	default:
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") != nil {
			b.Reset()
			b.Write(raw)
		}
		out = textLines("  ", "  ", b.String(), w, plain)
	}
	return out
}

// fileText is a file as read from disk for a dialog.
type fileText struct {
	text   string
	exists bool
	err    string // why it could not be read
}

// editLines shows an edit or a write as a diff against the file on disk
// when it was read, else as the old and new text.
func editLines(st styles, dir, tool string, in toolInput, w int, file *fileText) []string {
	path := in.str("file_path")
	var edits [][2]string
	all := map[int]bool{}
	switch tool {
	case "Edit":
		edits = append(edits, [2]string{in.str("old_string"), in.str("new_string")})
		all[0], _ = in["replace_all"].(bool)
	case "MultiEdit":
		list, _ := in["edits"].([]any)
		for i, e := range list {
			em, _ := e.(map[string]any)
			o, _ := em["old_string"].(string)
			n, _ := em["new_string"].(string)
			edits = append(edits, [2]string{o, n})
			all[i], _ = em["replace_all"].(bool)
		}
	}
	head := func(what string) []string {
		return textLines("  "+what+" ", "  ", termtext.Line(relPath(dir, path)), w, st.bold)
	}
	if tool == "Write" {
		content := in.str("content")
		switch {
		case file != nil && file.exists:
			out := head("overwrite")
			d := lineDiff(splitLines(file.text), splitLines(content))
			add, del := diffCounts(d)
			out = append(out, st.dim(fmt.Sprintf("  +%d −%d against the file on disk", add, del)))
			if add+del == 0 {
				return append(out, st.dim("  (the same content)"))
			}
			return append(out, diffLines(st, unified(d, 3), w, true)...)
		case file != nil && file.err != "":
			out := head("write")
			out = append(out, st.warn("  the file could not be read: "+termtext.Line(file.err)))
			return append(out, diffLines(st, lineDiff(nil, splitLines(content)), w, true)...)
		case file != nil:
			out := head("new file")
			return append(out, diffLines(st, lineDiff(nil, splitLines(content)), w, true)...)
		}
		out := head("write")
		return append(out, diffLines(st, lineDiff(nil, splitLines(content)), w, false)...)
	}
	out := head("update")
	if file != nil && file.exists {
		after, ok := file.text, true
		for i, e := range edits {
			if e[0] == "" || !strings.Contains(after, e[0]) {
				ok = false
				break
			}
			if all[i] {
				after = strings.ReplaceAll(after, e[0], e[1])
			} else {
				after = strings.Replace(after, e[0], e[1], 1)
			}
		}
		if ok {
			d := lineDiff(splitLines(file.text), splitLines(after))
			add, del := diffCounts(d)
			out = append(out, st.dim(fmt.Sprintf("  +%d −%d, with 3 lines of context", add, del)))
			return append(out, diffLines(st, unified(d, 3), w, true)...)
		}
		out = append(out, st.warn("  the text to replace is not in the file as it is now"))
	} else if file != nil && file.err != "" {
		out = append(out, st.warn("  the file could not be read: "+termtext.Line(file.err)))
	}
	for _, e := range edits {
		out = append(out, diffLines(st, lineDiff(splitLines(e[0]), splitLines(e[1])), w, false)...)
	}
	return out
}

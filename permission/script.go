package permission

import "strings"

// Script is a shell command line reduced to what Check needs: its simple
// commands, in source order, and the constructs that keep it from being
// allowed without a person looking. Package permission/shell produces it.
type Script struct {
	// Commands holds every simple command: those of pipelines and lists,
	// subshells, blocks, loops, conditionals, function bodies and command
	// or process substitutions. Redirections on a compound statement
	// appear as a Command without Args.
	Commands []Command
	// Risks names constructs that make the script ask (never allow):
	// "command substitution", "process substitution", "arithmetic", ...
	Risks []string
	// Functions are the names of the functions the script declares.
	Functions []string
}

// Command is one simple command.
type Command struct {
	Assigns   []Assign   // leading NAME=value assignments
	Args      []Word     // the command name and its arguments
	Redirects []Redirect // its redirections
}

// Assign is a NAME=value assignment.
type Assign struct {
	Name  string
	Value Word
}

// Word is one shell word. A literal word's Value has its quotes and
// escapes removed; any other word (one with an expansion, a glob or a
// brace expression) keeps its source text and may stand for anything.
type Word struct {
	Value   string
	Literal bool
}

// Redirect is one redirection.
type Redirect struct {
	Op     string // the operator, such as ">", ">>", "<", "2>&1" parts: ">&"
	Target Word   // the file, or the descriptor for a duplication
	// Write reports that the redirection may create or change Target.
	Write bool
	// Dup reports a descriptor duplication or close (>&2, <&-), which
	// touches no file.
	Dup bool
}

// words returns the command's argument values and whether all are literal.
func (c Command) words() ([]string, bool) {
	out := make([]string, len(c.Args))
	lit := true
	for i, w := range c.Args {
		out[i] = w.Value
		lit = lit && w.Literal
	}
	return out, lit
}

// String returns the command roughly as written, for messages.
func (c Command) String() string {
	var b strings.Builder
	for _, a := range c.Assigns {
		b.WriteString(a.Name + "=" + a.Value.Value + " ")
	}
	for i, w := range c.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Value)
	}
	for _, r := range c.Redirects {
		b.WriteString(" " + r.Op + r.Target.Value)
	}
	return strings.TrimSpace(b.String())
}

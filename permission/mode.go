package permission

import "fmt"

// Mode is a permission mode, as spelled in settings (defaultMode) and on
// the command line.
type Mode string

// The permission modes.
const (
	// ModeDefault asks before edits and commands; reads inside the working
	// directories are allowed.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows edits inside the working directories.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan is read-only: writing tools and commands are refused until
	// the plan is approved.
	ModePlan Mode = "plan"
	// ModeBypass allows everything but what deny rules refuse.
	ModeBypass Mode = "bypassPermissions"
	// ModeDontAsk denies anything that would ask.
	ModeDontAsk Mode = "dontAsk"
)

// Modes returns every mode.
func Modes() []Mode {
	return []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass, ModeDontAsk}
}

// ParseMode returns the mode named s; the empty string is ModeDefault.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeDefault, nil
	}
	for _, m := range Modes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q (want default, acceptEdits, plan, bypassPermissions or dontAsk)", s)
}

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

// ModeAuto is Claude Code's "auto" mode (a classifier judges each call),
// which troupe does not have. It is no mode of troupe's (ParseMode refuses
// it), but an Agent call or an agent definition may name it: ChildMode
// reads it as ModeAcceptEdits, the nearest mode that allows no more, as
// settings files' defaultMode "auto" is read.
const ModeAuto Mode = "auto"

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

// width orders the modes by what they let run without a person's yes:
// plan < dontAsk < default < acceptEdits < bypassPermissions. An unknown
// mode has no width (ok false).
func width(m Mode) (w int, ok bool) {
	switch m {
	case ModePlan:
		return 0, true
	case ModeDontAsk:
		return 1, true
	case ModeDefault:
		return 2, true
	case ModeAcceptEdits, ModeAuto:
		return 3, true
	case ModeBypass:
		return 4, true
	}
	return 0, false
}

// ChildMode returns the mode an agent started by an agent in mode parent
// runs in when it asks for mode asked (a teammate's Agent call, its agent
// definition's permissionMode, a pane teammate's --permission-mode or its
// team file entry): asked, unless that is wider than parent, then parent.
// A child never gets a wider mode than its parent, so a model cannot widen
// its own permissions by starting an agent, and whoever writes a
// definition or a team file cannot widen them either.
//
// The modes are ordered by what they let run without asking a person:
//
//	plan < dontAsk < default < acceptEdits < bypassPermissions
//
// so bypassPermissions only under bypassPermissions, and acceptEdits
// (and "auto", read as acceptEdits) only under acceptEdits or
// bypassPermissions. plan is narrower than every mode: a child may always
// ask for it. dontAsk is default with every question turned into a
// denial: it runs nothing default would not run without asking, so it
// sits below default (a child of a default parent may take it); and a
// child of a dontAsk parent gets dontAsk at most, because a default child
// would put to a person the questions its parent was started never to ask
// (a dontAsk run is one nobody watches). plan and dontAsk are not strictly
// comparable (plan may still ask to read outside the working directories;
// dontAsk runs what allow rules allow), and plan, the read-only one, is
// taken as the narrower.
//
// An empty asked inherits parent. An unknown asked (a hand-edited file)
// is read as default, then narrowed to parent; an unknown parent is read
// as default. The result is always one of Modes.
func ChildMode(parent, asked Mode) Mode {
	pw, ok := width(parent)
	if !ok {
		parent, pw = ModeDefault, 2
	}
	if parent == ModeAuto {
		parent = ModeAcceptEdits
	}
	if asked == "" {
		return parent
	}
	aw, ok := width(asked)
	if !ok {
		asked, aw = ModeDefault, 2
	}
	if asked == ModeAuto {
		asked = ModeAcceptEdits
	}
	if aw > pw {
		return parent
	}
	return asked
}

package permission_test

import (
	"slices"
	"testing"

	"github.com/troupe-dev/troupe/permission"
)

// ChildMode for every pair of modes (and the empty, "auto" and unknown
// names a definition, an Agent call or a hand-edited team file may hold):
// a child never runs wider than its parent.
func TestChildMode(t *testing.T) {
	const (
		P  = permission.ModePlan
		N  = permission.ModeDontAsk
		D  = permission.ModeDefault
		E  = permission.ModeAcceptEdits
		B  = permission.ModeBypass
		A  = permission.ModeAuto
		X  = permission.Mode("superuser")
		NO = permission.Mode("")
	)
	asked := []permission.Mode{NO, P, N, D, E, B, A, X}
	tests := []struct {
		parent permission.Mode
		want   []permission.Mode // ChildMode(parent, asked[i])
	}{
		//                        ""  plan dontAsk default acceptEdits bypass auto unknown
		{P, []permission.Mode{P, P, P, P, P, P, P, P}},
		{N, []permission.Mode{N, P, N, N, N, N, N, N}},
		{D, []permission.Mode{D, P, N, D, D, D, D, D}},
		{E, []permission.Mode{E, P, N, D, E, E, E, D}},
		{B, []permission.Mode{B, P, N, D, E, B, E, D}},
		{A, []permission.Mode{E, P, N, D, E, E, E, D}}, // auto: as acceptEdits
		{X, []permission.Mode{D, P, N, D, D, D, D, D}}, // unknown: as default
	}
	for _, tt := range tests {
		for i, a := range asked {
			got := permission.ChildMode(tt.parent, a)
			if got != tt.want[i] {
				t.Errorf("ChildMode(%q, %q) = %q; want %q", tt.parent, a, got, tt.want[i])
			}
			if !slices.Contains(permission.Modes(), got) {
				t.Errorf("ChildMode(%q, %q) = %q, not one of Modes", tt.parent, a, got)
			}
			// Clamping is idempotent: the result is within the parent.
			if again := permission.ChildMode(tt.parent, got); again != got {
				t.Errorf("ChildMode(%q, %q) = %q, then ChildMode(%q, %q) = %q", tt.parent, a, got, tt.parent, got, again)
			}
		}
	}
}

// What a clamped child runs without asking is a subset of what its parent
// runs without asking, for a command, an edit and a read outside, in
// every pair of modes: the order ChildMode uses is the one Check enforces.
func TestChildModeNoWiderInCheck(t *testing.T) {
	p := permission.Policy{}
	reqs := []permission.Request{
		toolReq("Bash", map[string]string{"command": "rm -rf build"}, ""),
		toolReq("Edit", map[string]string{"file_path": cwd + "/a.go"}, ""),
		toolReq("Read", map[string]string{"file_path": "/etc/hosts"}, ""),
		toolReq("Read", map[string]string{"file_path": cwd + "/a.go"}, ""),
	}
	for _, parent := range permission.Modes() {
		for _, asked := range append(permission.Modes(), permission.ModeAuto) {
			child := permission.ChildMode(parent, asked)
			for _, r := range reqs {
				r.Mode, r.Cwd = parent, cwd
				pd := p.Check(r)
				r.Mode = child
				cd := p.Check(r)
				if cd.Behavior == permission.Allow && pd.Behavior != permission.Allow {
					t.Errorf("%s %s: the %s child of a %s parent is allowed (%s), its parent not (%s)", r.Tool, r.Input, child, parent, cd.Reason, pd.Reason)
				}
			}
		}
	}
}

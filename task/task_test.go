package task

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckTransition(t *testing.T) {
	legal := map[[2]Status]bool{
		{Pending, Running}: true, {Pending, Failed}: true, {Pending, Killed}: true,
		{Running, Completed}: true, {Running, Failed}: true, {Running, Killed}: true,
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			t.Run(string(from)+"->"+string(to), func(t *testing.T) {
				err := CheckTransition(from, to)
				switch {
				case from == to:
					if err != nil {
						t.Errorf("CheckTransition(%s, %s) = %v; want nil (no change)", from, to, err)
					}
				case legal[[2]Status{from, to}]:
					if err != nil {
						t.Errorf("CheckTransition(%s, %s) = %v; want nil", from, to, err)
					}
				case from.Terminal():
					if !errors.Is(err, ErrTerminal) {
						t.Errorf("CheckTransition(%s, %s) = %v; want ErrTerminal", from, to, err)
					}
				default:
					if !errors.Is(err, ErrTransition) {
						t.Errorf("CheckTransition(%s, %s) = %v; want ErrTransition", from, to, err)
					}
				}
				var te *TransitionError
				if err != nil && !errors.As(err, &te) {
					t.Errorf("CheckTransition(%s, %s) = %T; want *TransitionError", from, to, err)
				}
			})
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[ID]bool{}
	for _, typ := range Types {
		for range 2000 {
			id := NewID(typ)
			if len(id) != 9 || !strings.HasPrefix(string(id), typ.Prefix()) {
				t.Fatalf("NewID(%s) = %q; want %s + 8 characters", typ, id, typ.Prefix())
			}
			if strings.Trim(string(id[1:]), base36) != "" {
				t.Fatalf("NewID(%s) = %q; want base-36 characters", typ, id)
			}
			if got := id.TypeOf(); got != typ {
				t.Fatalf("%q.TypeOf() = %q; want %q", id, got, typ)
			}
			if seen[id] {
				t.Fatalf("NewID(%s) = %q twice", typ, id)
			}
			seen[id] = true
		}
	}
	wantPrefix := map[Type]string{LocalBash: "b", LocalAgent: "a", RemoteAgent: "r", InProcessTeammate: "t", LocalWorkflow: "w", MonitorMCP: "m", Dream: "d"}
	for typ, p := range wantPrefix {
		if got := typ.Prefix(); got != p {
			t.Errorf("%s.Prefix() = %q; want %q", typ, got, p)
		}
	}
	for _, id := range []ID{"", "x12345678", "b1234567", "b123456789"} {
		if got := id.TypeOf(); got != "" {
			t.Errorf("%q.TypeOf() = %q; want \"\"", id, got)
		}
	}
}

func TestLooksLikePrompt(t *testing.T) {
	tests := []struct {
		out  string
		want bool
	}{
		{"Overwrite config? (y/n) ", true},
		{"Proceed [Y/n]", true},
		{"Press Enter to continue", true},
		{"building...\n[sudo] password for me: ", true},
		{"Continue?\n", true},
		{"Are you sure you want to delete it", true},
		{"Enter passphrase for key '/home/x/.ssh/id': ", true},
		{"compiling 3/10\n", false},
		{"(y/n)\ndone\n", false}, // only the last line counts
		{"", false},
		{"password saved\n", false},
	}
	for _, tt := range tests {
		if got := LooksLikePrompt([]byte(tt.out)); got != tt.want {
			t.Errorf("LooksLikePrompt(%q) = %v; want %v", tt.out, got, tt.want)
		}
	}
}

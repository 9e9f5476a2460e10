package tmux

import (
	"reflect"
	"strings"
	"testing"
)

func FuzzParsePanes(f *testing.F) {
	f.Add("%0|0|123||\n%1|1|124|3|\n%2|1|125||9\n")
	f.Add("")
	f.Add("%0|0|1||\n\n")
	f.Add("%x|0|1||")
	f.Add("%0|2|1||")
	f.Add("%0|0|-1||")
	f.Add("%0|0|1|a|")
	f.Fuzz(func(t *testing.T, out string) {
		panes, err := parsePanes(out)
		if err != nil {
			return
		}
		for id, st := range panes {
			if !validPaneID(id) || st.pid < 0 || st.status < -1 || st.signal < 0 {
				t.Fatalf("parsePanes(%q) gave %q %+v", out, id, st)
			}
			if !strings.Contains(out, id+"|") {
				t.Fatalf("parsePanes(%q) invented pane %q", out, id)
			}
		}
	})
}

func TestParsePanes(t *testing.T) {
	got, err := parsePanes("%0|0|123||\n%1|1|124|3|\n%2|1|125||9\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]paneState{
		"%0": {pid: 123, status: -1},
		"%1": {dead: true, pid: 124, status: 3},
		"%2": {dead: true, pid: 125, status: -1, signal: 9},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsePanes = %+v; want %+v", got, want)
	}
	for _, bad := range []string{"%0|0|1|", "0|0|1||", "%0|x|1||", "%0|0|p||", "%0|1|1|-2|", "%0|1|1||s"} {
		if _, err := parsePanes(bad); err == nil {
			t.Errorf("parsePanes(%q) = nil error; want one naming the line", bad)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	tail := []string{"-P", "-F", "#{pane_id}", "--", "cat", "-"}
	tests := []struct {
		name      string
		inside    bool
		teammates []string
		want      []string
	}{
		{"inside first", true, nil, append([]string{"split-window", "-d", "-t", "%0", "-h", "-l", "70%"}, tail...)},
		{"outside first in an existing session", false, nil, append([]string{"split-window", "-d", "-t", "=s:w"}, tail...)},
		{"one teammate: odd, split it vertically", true, []string{"%1"}, append([]string{"split-window", "-d", "-t", "%1", "-v"}, tail...)},
		{"two: even, the first horizontally", false, []string{"%1", "%2"}, append([]string{"split-window", "-d", "-t", "%1", "-h"}, tail...)},
		{"three: the middle vertically", true, []string{"%1", "%2", "%3"}, append([]string{"split-window", "-d", "-t", "%2", "-v"}, tail...)},
		{"four: floor((4-1)/2)=1", true, []string{"%1", "%2", "%3", "%4"}, append([]string{"split-window", "-d", "-t", "%2", "-h"}, tail...)},
	}
	for _, tt := range tests {
		if got := splitArgs(tt.inside, "%0", "=s:w", tt.teammates); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: splitArgs = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestTmuxArgAndColours(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a;": `a\;`, `a\;`: `a\\;`, ";": `\;`, "": ""} {
		if got := tmuxArg(in); got != want {
			t.Errorf("tmuxArg(%q) = %q; want %q", in, got, want)
		}
	}
	for name, want := range map[string]string{"red": "red", "purple": "magenta", "orange": "colour208", "pink": "colour205", "": ""} {
		if got, err := tmuxColour(name); err != nil || got != want {
			t.Errorf("tmuxColour(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := tmuxColour("Red"); err == nil || !strings.Contains(err.Error(), `"Red"`) {
		t.Errorf("tmuxColour(Red) = %v; want an error naming it", err)
	}
}

func TestTailOf(t *testing.T) {
	var long strings.Builder
	for i := range 30 {
		long.WriteString(strings.Repeat("x", i) + "\n")
	}
	tests := []struct{ in, want string }{
		{"", ""},
		{"boom   \n\n\nPane is dead (status 3, Wed Dec  2 19:20:00 2026)\n\n", "boom"},
		{"a\n\nb\n", "a\n\nb"},
		{long.String(), strings.TrimSuffix(long.String()[strings.Index(long.String(), strings.Repeat("x", 10)+"\n"):], "\n")},
		{strings.Repeat("y", 5000) + "\nlast", "last"},
	}
	for _, tt := range tests {
		if got := tailOf(tt.in); got != tt.want {
			t.Errorf("tailOf(%.40q) = %.80q; want %.80q", tt.in, got, tt.want)
		}
	}
}

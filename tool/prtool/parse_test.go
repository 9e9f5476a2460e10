package prtool

import (
	"strings"
	"testing"
)

func TestParsePR(t *testing.T) {
	good := map[string]PR{
		"https://github.com/octo/repo/pull/12":                  {"octo", "repo", 12},
		"https://github.com/octo/repo/pull/12/files?w=1#diff-x": {"octo", "repo", 12},
		"http://ghe.example.com/team-a/my.repo/pull/3":          {"team-a", "my.repo", 3},
		"  octo/repo#7 ": {"octo", "repo", 7},
	}
	for in, want := range good {
		if got, err := ParsePR(in); err != nil || got != want {
			t.Errorf("ParsePR(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "octo/repo", "octo/repo#0", "octo/repo#-1", "octo/repo#+3", "https://github.com/octo/repo/issues/12",
		"https://github.com/octo/repo/pull/x", "https://github.com/octo/repo", "o o/repo#1", "../repo#1", "octo/re/po#1"} {
		if got, err := ParsePR(in); err == nil {
			t.Errorf("ParsePR(%q) = %+v; want an error", in, got)
		} else if !strings.Contains(err.Error(), "is not a pull request") {
			t.Errorf("ParsePR(%q): %v; want the message naming the forms", in, err)
		}
	}
}

// FuzzParsePR: whatever it is given, ParsePR either refuses it or
// returns a pull request whose short form parses back to itself.
func FuzzParsePR(f *testing.F) {
	for _, s := range []string{"https://github.com/octo/repo/pull/12", "octo/repo#7", "https://github.com/a/b/pull/1/files", "a/b#", "#", "https://", "x/y#9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePR(s)
		if err != nil {
			return
		}
		if p.Number <= 0 || !validName(p.Owner) || !validName(p.Repo) {
			t.Fatalf("ParsePR(%q) = %+v: not a valid pull request", s, p)
		}
		if q, err := ParsePR(p.String()); err != nil || q != p {
			t.Fatalf("ParsePR(%q) = %+v, whose short form parses to %+v, %v", s, p, q, err)
		}
	})
}

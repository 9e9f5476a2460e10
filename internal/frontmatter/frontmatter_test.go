package frontmatter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	d, err := Parse("---\nname: review\ndescription: \"Review a change: style, tests\"  \nallowed-tools: [Read, \"Grep\", 'Bash(go test:*)']\ntools:\n  - Read\n  - Edit\nmodel: opus # a comment\n---\nBody line 1\n")
	if err != nil {
		t.Fatal(err)
	}
	if d.Text("name") != "review" || d.Text("description") != "Review a change: style, tests" || d.Text("model") != "opus" {
		t.Errorf("fields %+v", d.Fields)
	}
	if diff := cmp.Diff([]string{"Read", "Grep", "Bash(go test:*)"}, d.Strings("allowed-tools")); diff != "" {
		t.Errorf("allowed-tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Read", "Edit"}, d.Strings("tools")); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if d.Body != "Body line 1\n" || d.BodyLine != 10 {
		t.Errorf("body %q at %d", d.Body, d.BodyLine)
	}
	if got := (Doc{Fields: map[string]Value{"t": {Text: "Read, Grep ,"}}}).Strings("t"); len(got) != 2 {
		t.Errorf("comma list %q", got)
	}
	plain, err := Parse("no front matter\n---\n")
	if err != nil || plain.Body != "no front matter\n---\n" || len(plain.Fields) != 0 {
		t.Errorf("plain file: %+v, %v", plain, err)
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"---\nname: x\n":                "line 1: the front matter has no closing --- line",
		"---\n- item\n---\n":            "line 2: a list item outside a list",
		"---\nname: x\nname: y\n---\n":  "line 3: name is given twice",
		"---\njust words\n---\n":        `line 2: want key: value, got "just words"`,
		"---\nmeta:\n  sub: 1\n---\n":   "line 3: nested values are not supported",
		"---\ntools: [Read\n---\n":      "line 2: tools: the list has no closing ]",
		"---\nd: \"unterminated\n---\n": "line 2: d: bad double-quoted value",
		"\xff":                          "line 1: not UTF-8 text",
	} {
		_, err := Parse(src)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want %q", src, err, want)
		}
	}
}

// FuzzParse: any input parses or fails with a line inside the file, and
// the body is always a suffix of the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"---\nname: a\n---\nbody", "---\nt: [a, 'b,c']\nl:\n - x\n---\n", "plain", "---\n---\n", "---\nx: \"\\u00e9\"\n---"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		d, err := Parse(src)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Line < 1 || e.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("Parse(%q): %v", src, err)
			}
			return
		}
		if !strings.HasSuffix(strings.TrimPrefix(src, "\ufeff"), d.Body) {
			t.Fatalf("Parse(%q): body %q is not the end of the file", src, d.Body)
		}
	})
}

package task

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestNotificationXML(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := State{
		ID: "a1234abcd", Type: LocalAgent, Status: Completed, Description: `fix <b> & "c"`,
		ToolUseID: "toolu_1", OutputFile: "/tmp/x/a1234abcd.output", Start: start, End: start.Add(325 * time.Millisecond),
		Detail: &Agent{Result: "done </result><evil>&amp;", Usage: Usage{TotalTokens: 20, ToolUses: 2}},
	}
	got := NotificationFor(s).XML()
	want := `<task-notification>
<task-id>a1234abcd</task-id>
<tool-use-id>toolu_1</tool-use-id>
<task-type>local_agent</task-type>
<output-file>/tmp/x/a1234abcd.output</output-file>
<status>completed</status>
<summary>Agent "fix &lt;b&gt; &amp; \"c\"" finished</summary>
<result>done &lt;/result&gt;&lt;evil&gt;&amp;amp;</result>
<usage><total_tokens>20</total_tokens><tool_uses>2</tool_uses><duration_ms>325</duration_ms></usage>
</task-notification>`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("XML() mismatch (-want +got):\n%s", diff)
	}
}

func TestNotificationXMLOmitsEmpty(t *testing.T) {
	s := State{ID: "b1234abcd", Type: LocalBash, Status: Failed, Description: "make",
		Detail: &Shell{Exited: true, ExitCode: 2}}
	got := NotificationFor(s).XML()
	want := "<task-notification>\n<task-id>b1234abcd</task-id>\n<task-type>local_bash</task-type>\n" +
		"<status>failed</status>\n<summary>Background command \"make\" failed with exit code 2</summary>\n</task-notification>"
	if got != want {
		t.Errorf("XML() = %q; want %q", got, want)
	}
	if strings.Contains(got, "<usage>") {
		t.Errorf("XML() has usage for a shell: %q", got)
	}
}

func TestStallWatchCheck(t *testing.T) {
	t0 := time.Unix(0, 0)
	w := stallWatch{lastGrowth: t0}
	steps := []struct {
		size    int64
		at      time.Duration
		suspect bool
	}{
		{10, 5 * time.Second, false},  // grew: reset
		{10, 45 * time.Second, false}, // 40 s without growth
		{10, 50 * time.Second, true},  // 45 s
		{10, 55 * time.Second, true},  // still, until told
		{12, 60 * time.Second, false}, // grew again
		{12, 104 * time.Second, false},
		{12, 105 * time.Second, true},
	}
	for i, st := range steps {
		var got bool
		w, got = w.check(st.size, t0.Add(st.at), 45*time.Second)
		if got != st.suspect {
			t.Errorf("step %d: check(%d, +%v) = %v; want %v", i, st.size, st.at, got, st.suspect)
		}
	}
	w.told = true
	if _, got := w.check(12, t0.Add(200*time.Second), 45*time.Second); got {
		t.Errorf("check after told = true; want false")
	}
}

// FuzzNotificationXML checks that any text survives escaping: the block
// parses as XML and gives the text back.
func FuzzNotificationXML(f *testing.F) {
	f.Add("desc", "result")
	f.Add(`a <b> & "c" 'd'`, "</result><x>&amp;]]>")
	f.Fuzz(func(t *testing.T, desc, result string) {
		for _, s := range []string{desc, result} {
			if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0xFFFE || r == 0xFFFF || unicode.Is(unicode.Cs, r) }) {
				t.Skip("not XML character data")
			}
		}
		n := Notification{TaskID: "a12345678", Type: LocalAgent, Status: "completed", Summary: desc, Result: result}
		var got struct {
			TaskID  string `xml:"task-id"`
			Summary string `xml:"summary"`
			Result  string `xml:"result"`
		}
		if err := xml.Unmarshal([]byte(n.XML()), &got); err != nil {
			t.Fatalf("XML() does not parse: %v\n%s", err, n.XML())
		}
		if got.Summary != desc || got.Result != result || got.TaskID != "a12345678" {
			t.Errorf("round trip = %q %q; want %q %q", got.Summary, got.Result, desc, result)
		}
	})
}

package task

import (
	"strings"
	"testing"
	"time"
)

func TestRemoteNotification(t *testing.T) {
	start := time.Unix(100, 0)
	s := State{ID: "r12345678", Type: RemoteAgent, Status: Completed, Description: "survey", Start: start, End: start.Add(time.Second),
		Detail: &Remote{Worker: "w1", Result: "wrote notes.txt", Usage: Usage{TotalTokens: 42, ToolUses: 3, Duration: 1500 * time.Millisecond}}}
	x := NotificationFor(s).XML()
	for _, want := range []string{"<result>wrote notes.txt</result>", "<total_tokens>42</total_tokens>", "<tool_uses>3</tool_uses>",
		"<duration_ms>1500</duration_ms>", `Remote agent "survey" finished on worker w1`} {
		if !strings.Contains(x, want) {
			t.Errorf("notification lacks %q:\n%s", want, x)
		}
	}
	s.Status, s.Detail = Failed, &Remote{Error: "worker w1 lost"}
	x = NotificationFor(s).XML()
	if !strings.Contains(x, `failed: worker w1 lost`) || !strings.Contains(x, "<result>worker w1 lost</result>") {
		t.Errorf("failed notification lacks the error:\n%s", x)
	}
}

package tasktool_test

import (
	"strings"
	"testing"

	taskreg "github.com/troupe-dev/troupe/task"
	"github.com/troupe-dev/troupe/tool/tasktool"
)

func TestTaskOutputRemote(t *testing.T) {
	reg := registry(t)
	st, err := reg.Register(taskreg.State{Type: taskreg.RemoteAgent, Status: taskreg.Running, Description: "far",
		Detail: &taskreg.Remote{Worker: "lab2", Attempt: 1, Progress: "running Bash", Usage: taskreg.Usage{TotalTokens: 7, ToolUses: 2}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := tasktool.NewOutput(tasktool.Config{Registry: reg})
	res := run(t, out, `{"task_id": "`+string(st.ID)+`", "block": false}`)
	for _, want := range []string{"<worker>lab2 (attempt 1)</worker>", "<progress>running Bash</progress>", "total_tokens: 7, tool_uses: 2"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("TaskOutput of a remote task lacks %q:\n%s", want, res.Content)
		}
	}
	reg.Finish(st.ID, taskreg.Completed, func(s taskreg.State) taskreg.State {
		s.Detail = &taskreg.Remote{Worker: "lab2", Attempt: 1, Result: "all green"}
		return s
	})
	if res := run(t, out, `{"task_id": "`+string(st.ID)+`", "block": false}`); !strings.Contains(res.Content, "all green") {
		t.Errorf("TaskOutput of a finished remote task lacks its result:\n%s", res.Content)
	}
}

package approve_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/ask"
	"github.com/troupe-dev/troupe/permission/approve"
)

// A real program answers a question through the shapes docs/ask.md
// documents; what it read on stdin is the question request.
func TestQuestionCommand(t *testing.T) {
	qs := []ask.Question{{Question: "Which database?", Header: "Database", Options: []ask.Option{{Label: "Postgres", Description: "a"}, {Label: "SQLite", Description: "b"}}}}
	tests := []struct {
		name   string
		answer string
		want   ask.Reply
		err    string
	}{
		{"answers", `{"answers":{"Which database?":"SQLite"}}`, ask.Reply{Answers: ask.Answers{"Which database?": "SQLite"}}, ""},
		{"claude code shape", `{"behavior":"allow","updatedInput":{"questions":[],"answers":{"Which database?":"my own"}}}`, ask.Reply{Answers: ask.Answers{"Which database?": "my own"}}, ""},
		{"deny", `{"behavior":"deny","message":"not now"}`, ask.Reply{Declined: true, Reason: "not now"}, ""},
		{"wrong question", `{"answers":{"Which?":"x"}}`, ask.Reply{}, `"Which?" is not one of the questions asked`},
		{"no answers", `{"behavior":"allow"}`, ask.Reply{}, "no question was answered"},
		{"garbage", `yes`, ask.Reply{}, "printed no valid answer to a question"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.json")
			ans := filepath.Join(dir, "ans.json")
			if err := os.WriteFile(ans, []byte(tt.answer), 0o644); err != nil {
				t.Fatal(err)
			}
			q := approve.QuestionCommand{Command: &approve.Command{Shell: "cat > " + in + "; cat " + ans, Timeout: 10 * time.Second}, Cwd: dir}
			got, err := q.AskQuestions(t.Context(), ask.Request{Agent: "team-lead", ToolUseID: "tu1", Questions: qs})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("AskQuestions = %+v, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got.Declined != tt.want.Declined || got.Reason != tt.want.Reason || len(got.Answers) != len(tt.want.Answers) {
				t.Fatalf("AskQuestions = %+v, %v; want %+v", got, err, tt.want)
			}
			for k, v := range tt.want.Answers {
				if got.Answers[k] != v {
					t.Fatalf("answer to %q = %q; want %q", k, got.Answers[k], v)
				}
			}
			read, _ := os.ReadFile(in)
			for _, want := range []string{`"kind":"question"`, `"tool_name":"AskUserQuestion"`, `"tool_use_id":"tu1"`, `"question":"Which database?"`} {
				if !strings.Contains(string(read), want) {
					t.Errorf("the program read %s; want it to hold %s", read, want)
				}
			}
		})
	}
}

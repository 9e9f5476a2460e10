package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/llm/llmtest"
)

// anthropicRun runs troupe -p in cwd on a fake Anthropic server that
// gives replies in turn, with env added to the server's, and returns the
// server (its recorded requests) and the stream-json output. The run
// must use every reply.
func anthropicRun(t *testing.T, cwd string, env map[string]string, replies []llmtest.AnthropicReply, args ...string) (*llmtest.AnthropicServer, string) {
	t.Helper()
	srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicScript(replies...))
	all := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	for k, v := range env {
		all[k] = v
	}
	home := t.TempDir()
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv:  func(k string) string { return all[k] },
		HomeDir: func() (string, error) { return home, nil }, Getwd: func() (string, error) { return cwd, nil },
		Now: time.Now, NewID: func() string { return "session-1" }, Version: "v0.0.0-test"}
	args = append([]string{"--home", filepath.Join(home, ".troupe"), "-p", "--trust", "--output-format", "stream-json"}, args...)
	if err := m.Run(t.Context(), args); err != nil {
		t.Fatalf("troupe %v: %v\n%s\n%s", args, err, out.String(), errOut.String())
	}
	if n := len(srv.Requests()); n != len(replies) {
		t.Fatalf("%d model requests; want %d\n%s\n%s", n, len(replies), out.String(), errOut.String())
	}
	return srv, out.String()
}

// toolResultSent returns the tool_result for id in the last message of
// request i, as the server received it.
func toolResultSent(t *testing.T, srv *llmtest.AnthropicServer, i int, id string) llmtest.AnthropicBlock {
	t.Helper()
	for _, b := range srv.Requests()[i].LastMessage().Content {
		if b.Type == "tool_result" && b.ToolUseID == id {
			return b
		}
	}
	t.Fatalf("request %d carries no tool_result for %s: %+v", i, id, srv.Requests()[i].LastMessage())
	return llmtest.AnthropicBlock{}
}

// TestWebFetchSmallModelAnthropic: WebFetch's one model call goes to the
// small model (ANTHROPIC_SMALL_FAST_MODEL, else the setting smallModel),
// the lead's requests to the lead's model; with neither set, the
// answering call uses the lead's model too.
func TestWebFetchSmallModelAnthropic(t *testing.T) {
	site := webSite(t)
	fetch := fmt.Sprintf(`{"url": %q, "prompt": "What is the answer?"}`, site.URL+"/faq")
	const lead = "claude-sonnet-4-6"
	tests := []struct {
		name, env, setting, want string
	}{
		{"neither", "", "", lead},
		{"environment", "claude-haiku-4-5", "", "claude-haiku-4-5"},
		{"setting", "", "claude-haiku-5-5", "claude-haiku-5-5"},
		{"environment over setting", "claude-haiku-4-5", "claude-haiku-5-5", "claude-haiku-4-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd := t.TempDir()
			if tt.setting != "" {
				writeIn(t, filepath.Join(cwd, ".troupe", "settings.json"), `{"smallModel": "`+tt.setting+`"}`)
			}
			env := map[string]string{}
			if tt.env != "" {
				env["ANTHROPIC_SMALL_FAST_MODEL"] = tt.env
			}
			srv, _ := anthropicRun(t, cwd, env, []llmtest.AnthropicReply{
				llmtest.AnthropicToolCall("toolu_w", "WebFetch", fetch),
				llmtest.AnthropicText("FORTY-TWO"),
				llmtest.AnthropicText("LEAD-DONE"),
			}, "--model", lead, "--allowedTools", "WebFetch(domain:127.0.0.1)", "look it up")
			reqs := srv.Requests()
			if !strings.Contains(reqs[1].LastMessage().Content[0].Text, "What is the answer?") || len(reqs[1].Tools) != 0 {
				t.Fatalf("request 1 is not WebFetch's question: %+v", reqs[1].LastMessage())
			}
			if reqs[0].Model != lead || reqs[2].Model != lead {
				t.Errorf("the lead's requests went to %q and %q; want %q", reqs[0].Model, reqs[2].Model, lead)
			}
			if reqs[1].Model != tt.want {
				t.Errorf("WebFetch's request went to %q; want %q", reqs[1].Model, tt.want)
			}
			if got := toolResultSent(t, srv, 2, "toolu_w").Text; got != "FORTY-TWO" {
				t.Errorf("WebFetch's result = %q; want the small model's answer", got)
			}
		})
	}
}

// TestAskUserQuestionAnthropic: headless on the Anthropic API, the
// --permission-prompt-command answers AskUserQuestion and the answer is
// the tool_result the API receives.
func TestAskUserQuestionAnthropic(t *testing.T) {
	cwd := t.TempDir()
	seen := filepath.Join(t.TempDir(), "request.json")
	prompt := writeHook(t, "cat > "+seen+`; echo '{"answers":{"Which database?":"SQLite"}}'`)
	ask := `{"questions": [{"question": "Which database?", "header": "Database", "multiSelect": false,
	  "options": [{"label": "Postgres", "description": "a server"}, {"label": "SQLite", "description": "a file"}]}]}`
	srv, out := anthropicRun(t, cwd, nil, []llmtest.AnthropicReply{
		llmtest.AnthropicToolCall("toolu_ask", "AskUserQuestion", ask),
		llmtest.AnthropicText("Using SQLite."),
	}, "--permission-prompt-command", prompt, "set up the app")
	res := toolResultSent(t, srv, 1, "toolu_ask")
	if want := `"Which database?"="SQLite"`; !strings.Contains(res.Text, want) || res.IsError {
		t.Errorf("tool_result sent = %q (error %v); want it to contain %s", res.Text, res.IsError, want)
	}
	var req map[string]any
	if b, err := os.ReadFile(seen); err != nil || json.Unmarshal(b, &req) != nil || req["kind"] != "question" || req["tool_use_id"] != "toolu_ask" {
		t.Errorf("the prompt command was asked %v (%v)", req, err)
	}
	if !strings.Contains(out, `"result":"Using SQLite."`) {
		t.Errorf("the run did not end on the model's answer:\n%s", out)
	}
}

// TestNotebookEditAnthropic: on the Anthropic API, NotebookEdit replaces
// a cell's source and inserts a cell in a real notebook, which is still
// valid JSON with both edits and its outputs.
func TestNotebookEditAnthropic(t *testing.T) {
	cwd := t.TempDir()
	nb, err := os.ReadFile(filepath.Join("..", "..", "tool", "filetool", "testdata", "notebooks", "analysis.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cwd, "nb", "analysis.ipynb")
	writeIn(t, path, string(nb))
	srv, _ := anthropicRun(t, cwd, nil, []llmtest.AnthropicReply{
		llmtest.AnthropicToolCall("toolu_1", "NotebookEdit", `{"notebook_path": "nb/analysis.ipynb", "cell_id": "e5f6a7b8", "new_source": "import polars as pl"}`),
		llmtest.AnthropicToolCall("toolu_2", "NotebookEdit", `{"notebook_path": "nb/analysis.ipynb", "cell_id": "a1b2c3d4", "edit_mode": "insert", "cell_type": "markdown", "new_source": "# Summary"}`),
		llmtest.AnthropicText("edited"),
	}, "--allowedTools", "Edit(nb/**)", "switch to polars")
	for i, id := range []string{"toolu_1", "toolu_2"} {
		if r := toolResultSent(t, srv, i+1, id); r.IsError {
			t.Errorf("NotebookEdit %s failed: %s", id, r.Text)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cells []struct {
			ID       string            `json:"id"`
			CellType string            `json:"cell_type"`
			Source   []string          `json:"source"`
			Outputs  []json.RawMessage `json:"outputs"`
		} `json:"cells"`
		NBFormat int `json:"nbformat"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the notebook is no longer JSON: %v\n%s", err, b)
	}
	src := map[string]string{}
	var outputs int
	for _, c := range doc.Cells {
		src[c.ID] = strings.Join(c.Source, "")
		outputs += len(c.Outputs)
	}
	if src["e5f6a7b8"] != "import polars as pl" {
		t.Errorf("cell e5f6a7b8 = %q; want the new source", src["e5f6a7b8"])
	}
	if len(doc.Cells) < 2 || doc.Cells[1].CellType != "markdown" || strings.Join(doc.Cells[1].Source, "") != "# Summary" {
		t.Errorf("the inserted cell is not second: %+v", doc.Cells)
	}
	if outputs == 0 || doc.NBFormat != 4 {
		t.Errorf("the notebook lost its outputs (%d) or format (%d)", outputs, doc.NBFormat)
	}
}

// TestWorktreeAnthropic: on the Anthropic API the lead enters a new
// worktree, writes there, and leaves keeping it: the branch
// worktree/<name> exists and holds the work, the main checkout does not.
func TestWorktreeAnthropic(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	cwd := filepath.Join(dir, "proj")
	writeIn(t, filepath.Join(cwd, "README"), "x\n")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = cwd
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "t"}, {"config", "user.email", "t@example.com"}, {"config", "commit.gpgsign", "false"}, {"add", "."}, {"commit", "-q", "-m", "first"}} {
		git(args...)
	}
	srv, out := anthropicRun(t, cwd, nil, []llmtest.AnthropicReply{
		llmtest.AnthropicToolCall("toolu_in", "EnterWorktree", `{"name": "spike"}`),
		llmtest.AnthropicToolCall("toolu_w", "Write", `{"file_path": "spike.txt", "content": "s\n"}`),
		llmtest.AnthropicToolCall("toolu_out", "ExitWorktree", `{"action": "keep"}`),
		llmtest.AnthropicText("kept"),
	}, "--allowedTools", "EnterWorktree,ExitWorktree,Write", "spike it")
	if r := toolResultSent(t, srv, 1, "toolu_in"); r.IsError || !strings.Contains(r.Text, "worktree/spike") {
		t.Errorf("EnterWorktree's result = %q (error %v)", r.Text, r.IsError)
	}
	if r := toolResultSent(t, srv, 3, "toolu_out"); r.IsError || !strings.Contains(r.Text, "is kept on branch worktree/spike") {
		t.Errorf("ExitWorktree's result = %q (error %v)", r.Text, r.IsError)
	}
	if !strings.Contains(out, `"result":"kept"`) {
		t.Errorf("the run did not end as scripted:\n%s", out)
	}
	if got := strings.TrimSpace(git("branch", "--list", "worktree/spike")); !strings.HasSuffix(got, "worktree/spike") {
		t.Errorf("git branch --list worktree/spike = %q; want the branch", got)
	}
	tree := filepath.Join(dir, "proj-worktrees", "worktree", "spike")
	if b, err := os.ReadFile(filepath.Join(tree, "spike.txt")); err != nil || string(b) != "s\n" {
		t.Errorf("the kept worktree's spike.txt: %q, %v", b, err)
	}
	if !strings.Contains(git("worktree", "list"), tree) {
		t.Errorf("git worktree list lacks %s", tree)
	}
	if _, err := os.Stat(filepath.Join(cwd, "spike.txt")); err == nil {
		t.Error("the Write reached the main checkout")
	}
}

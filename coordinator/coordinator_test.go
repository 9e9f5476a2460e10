package coordinator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each rule of coordinator mode is in the prompt, found by a phrase of
// our own wording.
func TestSystemPromptRules(t *testing.T) {
	p := SystemPrompt(Context{WorkerTools: []string{"Read", "Write", "Bash"}, Scratchpad: "/tmp/x/scratchpad"})
	rules := []struct{ rule, phrase string }{
		{"marker", Marker},
		{"orchestrate, don't execute", "You are the conductor, not a player"},
		{"answer directly what needs no tools", "with no tool at all, answer it yourself"},
		{"phase 1: parallel research", "put all of their Agent calls in one single message"},
		{"phase 2: synthesis by the coordinator", "this phase is yours alone"},
		{"phase 3: one writer per file set", "Give each set of files exactly one writer"},
		{"phase 3: enforced by write claims", "another worker's write to one of them is refused"},
		{"phase 4: verification by fresh workers", "a fresh worker, one that did not write the change, checks that it works"},
		{"never delegate understanding", "You own the understanding; never push it back onto a worker"},
		{"self-contained specs", "the files and line numbers involved, the cause you established"},
		{"what done means", "how the worker will know it is done"},
		{"never 'based on your findings'", `Never write phrases such as "based on your findings"`},
		{"continue for corrections or overlapping research", "its research covered exactly the files that now need editing"},
		{"spawn fresh for verification, wrong approach, unrelated work", "Start a fresh worker (Agent) for verification, after a worker went down the wrong path"},
		{"notifications are internal signals", "internal status signals from your own crew, not something the user typed"},
		{"don't thank workers", "Do not thank a worker"},
		{"task-notification user-role messages", "user-role messages holding a <task-notification> element"},
		{"never predict or invent results", "never guess, predict or make up what a worker found"},
		{"say what was launched and end the turn", "tell the user in a sentence or two what you launched and why, then end your turn"},
		{"no worker to watch another", "do not start one merely to keep an eye on another worker"},
		{"stop a wrong-way worker with TaskStop", "If a worker is heading the wrong way, stop it with TaskStop"},
		{"a stopped worker can be continued", "A stopped worker keeps its conversation: continue it with SendMessage"},
		{"worker tools filled in", "Workers have these tools: Read, Write, Bash."},
		{"no MCP servers", "MCP servers: none are connected in this session."},
		{"scratchpad named", "Scratchpad: /tmp/x/scratchpad"},
		{"scratchpad without permission prompts", "may read and write files in this folder without asking"},
	}
	for _, r := range rules {
		if !strings.Contains(p, r.phrase) {
			t.Errorf("rule %q: prompt lacks %q", r.rule, r.phrase)
		}
	}
	if strings.Contains(p, "{{") {
		t.Errorf("prompt has an unfilled placeholder:\n%s", p)
	}
	if strings.Contains(p, "sub-agent") {
		t.Error("the coordinator's prompt says sub-agent, the phrase that marks workers' prompts")
	}
	if p := SystemPrompt(Context{MCPServers: []string{"github"}}); !strings.Contains(p, "MCP servers: github") || !strings.Contains(p, "Scratchpad: none") {
		t.Errorf("prompt with an MCP server and no scratchpad:\n%s", p)
	}
}

func TestWorkerSystem(t *testing.T) {
	s := WorkerSystem("general-purpose", "/tmp/s")
	if !strings.Contains(s, "general-purpose sub-agent") || !strings.Contains(s, "/tmp/s") || strings.Contains(s, Marker) ||
		!strings.Contains(s, "Do not work around a refusal") {
		t.Errorf("WorkerSystem = %q", s)
	}
}

func TestEnabled(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvMode {
				return v
			}
			return ""
		}
	}
	for _, tt := range []struct {
		flag bool
		env  string
		want bool
	}{{true, "", true}, {false, "1", true}, {false, "TRUE", true}, {false, "0", false}, {false, "", false}, {false, "no", false}} {
		if got := Enabled(tt.flag, env(tt.env)); got != tt.want {
			t.Errorf("Enabled(%v, %s=%q) = %v; want %v", tt.flag, EnvMode, tt.env, got, tt.want)
		}
	}
	if Enabled(false, nil) {
		t.Error("Enabled(false, nil) = true")
	}
	claude := func(k string) string {
		if k == EnvClaudeMode {
			return "1"
		}
		return ""
	}
	if !Enabled(false, claude) {
		t.Errorf("Enabled with %s=1 = false", EnvClaudeMode)
	}
}

func TestScratchpad(t *testing.T) {
	tasks := filepath.Join(t.TempDir(), "proj", "sess", "tasks")
	dir, err := Scratchpad(tasks)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(tasks), "scratchpad"); dir != want {
		t.Errorf("Scratchpad = %s; want %s", dir, want)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("scratchpad folder: %v, %v", fi, err)
	}
}

// The prompt tells of remote workers only when the session has them.
func TestSystemPromptRemote(t *testing.T) {
	if p := SystemPrompt(Context{}); !strings.Contains(p, "Remote workers: none in this session") || strings.Contains(p, `isolation "remote"`) {
		t.Errorf("prompt without remote workers:\n%s", p)
	}
	p := SystemPrompt(Context{Remote: true})
	for _, want := range []string{`isolation "remote"`, `labels to choose the hosts`, "cannot be continued with SendMessage", "its prompt must carry everything it needs"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt with remote workers lacks %q", want)
		}
	}
	if strings.Contains(p, "{{") {
		t.Errorf("a placeholder is left in the prompt:\n%s", p)
	}
}

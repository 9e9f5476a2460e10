package approve_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/audit"
	"github.com/troupe-dev/troupe/permission/shell"
)

// fakeAsker records the requests and returns a fixed answer.
type fakeAsker struct {
	ans  approve.Answer
	err  error
	seen []approve.AskRequest
}

func (f *fakeAsker) Ask(_ context.Context, r approve.AskRequest) (approve.Answer, error) {
	f.seen = append(f.seen, r)
	return f.ans, f.err
}

func TestApprover(t *testing.T) {
	cwd := "/work/proj"
	deny := permission.MustParseRule("Bash(rm:*)")
	deny.Source = "/work/proj/.troupe/settings.json"
	allow := permission.MustParseRule("Bash(npm test)")
	allow.Source = "cliArg"
	askRule := permission.MustParseRule("Bash(git push:*)")
	askRule.Source = "/home/u/.troupe/settings.json"
	policy := permission.Policy{Allow: []permission.Rule{allow}, Ask: []permission.Rule{askRule}, Deny: []permission.Rule{deny}, Shell: shell.Parse}
	fixed := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	bash := func(c string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": c}); return b }

	tests := []struct {
		name      string
		mode      permission.Mode
		tool      string
		input     json.RawMessage
		readOnly  bool
		asker     *fakeAsker
		hint      string
		wantAllow bool
		want      []string // substrings of the verdict's reason
		asked     bool
		audit     audit.Entry // Decision, Rule, Source, Tool, Input checked
		update    string
	}{
		{name: "allow rule", tool: "Bash", input: bash("npm test"), wantAllow: true,
			audit: audit.Entry{Tool: "Bash", Input: "npm test", Decision: permission.Allow, Rule: "Bash(npm test)", Source: "cliArg"}},
		{name: "read inside cwd", tool: "Read", input: json.RawMessage(`{"file_path":"src/a.go"}`), readOnly: true, wantAllow: true,
			audit: audit.Entry{Tool: "Read", Input: "src/a.go", Decision: permission.Allow}},
		{name: "deny rule names rule and file", tool: "Bash", input: bash("rm -rf build"), asker: &fakeAsker{ans: approve.Answer{Allow: true}},
			want:  []string{"denied by rule Bash(rm:*)", "(rule Bash(rm:*) from /work/proj/.troupe/settings.json)"},
			audit: audit.Entry{Tool: "Bash", Input: "rm -rf build", Decision: permission.Deny, Rule: "Bash(rm:*)", Source: "/work/proj/.troupe/settings.json"}},
		{name: "deny rule wins in bypass", mode: permission.ModeBypass, tool: "Bash", input: bash("rm -rf build"),
			want:  []string{"from /work/proj/.troupe/settings.json"},
			audit: audit.Entry{Tool: "Bash", Decision: permission.Deny, Rule: "Bash(rm:*)"}},
		{name: "bypass allows", mode: permission.ModeBypass, tool: "Bash", input: bash("make install"), wantAllow: true,
			audit: audit.Entry{Tool: "Bash", Decision: permission.Allow}},
		{name: "ask without asker denies with hint", tool: "Bash", input: bash("make"), hint: "use --allowedTools",
			want:  []string{`"make" needs approval`, "use --allowedTools"},
			audit: audit.Entry{Tool: "Bash", Input: "make", Decision: permission.Deny}},
		{name: "ask answered allow", tool: "Bash", input: bash("make"), asker: &fakeAsker{ans: approve.Answer{Allow: true, UpdatedInput: bash("make -n")}},
			wantAllow: true, asked: true, update: `{"command":"make -n"}`,
			audit: audit.Entry{Tool: "Bash", Input: "make", Decision: permission.Allow}},
		{name: "ask rule answered deny", tool: "Bash", input: bash("git push origin"), asker: &fakeAsker{ans: approve.Answer{Message: "not on Fridays"}},
			asked: true, want: []string{"not on Fridays"},
			audit: audit.Entry{Tool: "Bash", Decision: permission.Deny, Rule: "Bash(git push:*)", Source: "/home/u/.troupe/settings.json"}},
		{name: "asker error denies", tool: "Edit", input: json.RawMessage(`{"file_path":"a.go"}`), asker: &fakeAsker{err: errors.New("prompt crashed")},
			asked: true, want: []string{"prompt crashed"},
			audit: audit.Entry{Tool: "Edit", Input: "a.go", Decision: permission.Deny}},
		{name: "bad updated input denies", tool: "Bash", input: bash("make"), asker: &fakeAsker{ans: approve.Answer{Allow: true, UpdatedInput: json.RawMessage(`[1]`)}},
			asked: true, want: []string{"not a JSON object"},
			audit: audit.Entry{Tool: "Bash", Decision: permission.Deny}},
		{name: "dontAsk denies what would ask", mode: permission.ModeDontAsk, tool: "Bash", input: bash("make"), asker: &fakeAsker{ans: approve.Answer{Allow: true}},
			want:  []string{"dontAsk mode"},
			audit: audit.Entry{Tool: "Bash", Decision: permission.Deny, Mode: permission.ModeDontAsk}},
		{name: "plan mode refuses writers", mode: permission.ModePlan, tool: "Write", input: json.RawMessage(`{"file_path":"a.go"}`),
			want:  []string{"plan mode"},
			audit: audit.Entry{Tool: "Write", Decision: permission.Deny}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			log, err := audit.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			ap := &approve.Approver{Policy: policy, Agent: "alice", Cwd: cwd, Mode: tt.mode, Audit: log, Now: func() time.Time { return fixed }}
			if tt.asker != nil {
				ap.Asker = tt.asker
			}
			if tt.hint != "" {
				ap.Hint = func(approve.AskRequest) string { return tt.hint }
			}
			v, err := ap.Approve(t.Context(), agent.Request{Tool: tt.tool, ToolUseID: "toolu_1", Input: tt.input, ReadOnly: tt.readOnly})
			if err != nil {
				t.Fatalf("Approve: %v", err)
			}
			if v.Allow != tt.wantAllow {
				t.Errorf("Allow = %v (reason %q); want %v", v.Allow, v.Reason, tt.wantAllow)
			}
			for _, w := range tt.want {
				if !strings.Contains(v.Reason, w) {
					t.Errorf("reason %q does not contain %q", v.Reason, w)
				}
			}
			if string(v.UpdatedInput) != tt.update {
				t.Errorf("UpdatedInput = %s; want %s", v.UpdatedInput, tt.update)
			}
			if tt.asker != nil {
				if got := len(tt.asker.seen) > 0; got != tt.asked {
					t.Errorf("asked = %v; want %v", got, tt.asked)
				}
				if tt.asked {
					r := tt.asker.seen[0]
					if r.Agent != "alice" || r.Tool != tt.tool || r.ToolUseID != "toolu_1" || r.Cwd != cwd || r.Reason == "" {
						t.Errorf("ask request = %+v", r)
					}
				}
			}
			log.Close()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) != 1 {
				t.Fatalf("audit has %d lines; want 1:\n%s", len(lines), data)
			}
			var e audit.Entry
			if err := json.Unmarshal([]byte(lines[0]), &e); err != nil {
				t.Fatal(err)
			}
			want := tt.audit
			if e.Agent != "alice" || !e.Time.Equal(fixed) || e.Tool != want.Tool || e.Decision != want.Decision || e.Reason == "" ||
				(want.Input != "" && e.Input != want.Input) || e.Rule != want.Rule || (want.Source != "" && e.Source != want.Source) ||
				(want.Mode != "" && e.Mode != want.Mode) {
				t.Errorf("audit entry = %+v; want %+v", e, want)
			}
		})
	}
}

func TestApproverCancelledAsk(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ap := &approve.Approver{Policy: permission.Policy{Shell: shell.Parse}, Cwd: "/w",
		Asker: approve.AskerFunc(func(ctx context.Context, _ approve.AskRequest) (approve.Answer, error) {
			return approve.Answer{}, ctx.Err()
		})}
	_, err := ap.Approve(ctx, agent.Request{Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Approve with a cancelled context = %v; want context.Canceled", err)
	}
}

func TestApproverAuditFailureFailsTheCall(t *testing.T) {
	log, err := audit.Open(filepath.Join(t.TempDir(), "a.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	ap := &approve.Approver{Policy: permission.Policy{}, Cwd: "/w", Audit: log}
	if _, err := ap.Approve(t.Context(), agent.Request{Tool: "Read", Input: json.RawMessage(`{"file_path":"x"}`)}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Approve with a closed audit log = %v; want audit.ErrClosed", err)
	}
}

func TestDenyReason(t *testing.T) {
	r := permission.MustParseRule("Read(./.env)")
	r.Source = "/p/.claude/settings.json"
	got := approve.DenyReason(permission.Decision{Behavior: permission.Deny, Rule: &r, Reason: "denied by rule Read(./.env)"})
	if want := "denied by rule Read(./.env) (rule Read(./.env) from /p/.claude/settings.json)"; got != want {
		t.Errorf("DenyReason = %q; want %q", got, want)
	}
	if got := approve.DenyReason(permission.Decision{Reason: "plan mode"}); got != "plan mode" {
		t.Errorf("DenyReason without rule = %q", got)
	}
}

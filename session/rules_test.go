package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/permission/shell"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/task"
)

// A person's rule changes take effect at once and are kept in the local
// settings file; a rule from another file is only taken out of force;
// "allow always" on the lead's own question adds its exact rule.
func TestRules(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, ".troupe", "settings.local.json")
	user := filepath.Join(dir, "home", "settings.json")
	reg := task.New(task.Config{Dir: t.TempDir()})
	defer reg.Close(context.Background())
	s, err := New(Config{Registry: reg, RuleSource: local, SaveRule: func(b permission.Behavior, rule string, add bool) error {
		if add {
			return settings.AddRule(context.Background(), local, b, rule)
		}
		return settings.RemoveRule(context.Background(), local, b, rule)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fromUser := permission.Rule{Tool: "Bash", Specifier: "ls:*", Source: user}
	s.SetApprover(swarm.NewApprover(&approve.Approver{Mode: permission.ModeDefault, Policy: permission.Policy{Allow: []permission.Rule{fromUser}}}))

	if err := s.AddRule(permission.Deny, "Bash(rm:*)"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRule(permission.Allow, "Bash("); err == nil {
		t.Error("a rule that does not parse was added")
	}
	_, _, deny := s.Rules()
	if len(deny) != 1 || deny[0].String() != "Bash(rm:*)" || deny[0].Source != local {
		t.Errorf("deny rules %v", deny)
	}
	if got := readRules(t, local, "deny"); len(got) != 1 || got[0] != "Bash(rm:*)" {
		t.Errorf("the local file's deny rules: %v", got)
	}
	if _, err := s.RemoveRule(permission.Deny, "Bash(rm:*)"); err != nil {
		t.Fatal(err)
	}
	if got := readRules(t, local, "deny"); len(got) != 0 {
		t.Errorf("the removed rule is still in the local file: %v", got)
	}
	note, err := s.RemoveRule(permission.Allow, "Bash(ls:*)")
	if err != nil || !strings.Contains(note, user) {
		t.Errorf("removing the user file's rule: note %q, err %v; want a note naming %s", note, err, user)
	}
	allow, _, _ := s.Rules()
	for _, r := range allow {
		if r.String() == "Bash(ls:*)" {
			t.Errorf("Bash(ls:*) is still in force: %v", allow)
		}
	}
	if _, err := s.RemoveRule(permission.Allow, "Bash(ls:*)"); err == nil {
		t.Error("removing a rule not in force: no error")
	}

	// The lead's own question, answered "allow always".
	sub := s.Subscribe(false)
	defer sub.Close()
	done := make(chan approve.Answer, 1)
	go func() {
		ans, _ := s.LeadAsker().Ask(context.Background(), approve.AskRequest{Tool: "Bash", Input: json.RawMessage(`{"command":"make check"}`)})
		done <- ans
	}()
	q, _ := next(t, sub, KindPermission)
	if err := s.Answer(q.Question.ID, Verdict{Allow: true, Always: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-done:
		if !ans.Allow {
			t.Error("allow always did not allow the call")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the question was not answered")
	}
	if got := readRules(t, local, "allow"); len(got) != 1 || got[0] != "Bash(make check)" {
		t.Errorf("allow always kept %v, want [Bash(make check)]", got)
	}
}

func readRules(t *testing.T, path, key string) []string {
	t.Helper()
	var doc struct{ Permissions map[string][]string }
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Permissions[key]
}

// "Allow always" on a call the model wrote with '*' or ':*' saves a rule
// that covers exactly that call, named in the question before the answer;
// a glob, which no rule can name exactly, is allowed once and saves none.
func TestAlwaysRuleNarrow(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "settings.local.json")
	reg := task.New(task.Config{Dir: t.TempDir()})
	defer reg.Close(context.Background())
	s, err := New(Config{Registry: reg, RuleSource: local, SaveRule: func(b permission.Behavior, rule string, add bool) error {
		return settings.AddRule(context.Background(), local, b, rule)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetApprover(swarm.NewApprover(&approve.Approver{Mode: permission.ModeDefault}))
	sub := s.Subscribe(false)
	defer sub.Close()
	tests := []struct{ command, always string }{
		{"python3 '*'", "Bash(python3 '*')"},
		{`git log ":*"`, "Bash(git log ':*')"},
		{"python3 *", ""},
		{"git log :*", ""},
	}
	var kept []string
	for _, tt := range tests {
		in, _ := json.Marshal(map[string]string{"command": tt.command})
		done := make(chan approve.Answer, 1)
		go func() {
			ans, _ := s.LeadAsker().Ask(context.Background(), approve.AskRequest{Tool: "Bash", Input: in})
			done <- ans
		}()
		q, _ := next(t, sub, KindPermission)
		if q.Question.Always != tt.always {
			t.Errorf("%s: the question's always rule is %q; want %q", tt.command, q.Question.Always, tt.always)
		}
		if err := s.Answer(q.Question.ID, Verdict{Allow: true, Always: true}); err != nil {
			t.Fatal(err)
		}
		if ans := <-done; !ans.Allow {
			t.Errorf("%s: allow always did not allow the call", tt.command)
		}
		if tt.always != "" {
			kept = append(kept, tt.always)
		}
	}
	if _, err := os.Stat(local); err != nil {
		t.Fatal(err)
	}
	if got := readRules(t, local, "allow"); strings.Join(got, " ") != strings.Join(kept, " ") {
		t.Errorf("allow always kept %q; want %q", got, kept)
	}
	allow, _, _ := s.Rules()
	p := permission.Policy{Allow: allow, Shell: shell.Parse}
	for _, c := range []string{"python3 evil.py", "git log --output=/tmp/x -p"} {
		in, _ := json.Marshal(map[string]string{"command": c})
		if d := p.Check(permission.Request{Tool: "Bash", Input: in, Cwd: dir}); d.Behavior == permission.Allow {
			t.Errorf("the kept rules %v allow %q", allow, c)
		}
	}
}

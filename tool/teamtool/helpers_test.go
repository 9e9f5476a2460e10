package teamtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/store/mem"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/tool"
	"github.com/troupe-dev/troupe/tool/teamtool"
)

// epoch is the fixed clock of the tests.
var epoch = time.Date(2026, 12, 2, 13, 13, 36, 880_000_000, time.UTC)

func clock() time.Time { return epoch }

// stores is one backend's three stores.
type stores struct {
	Teams team.Store
	Mail  mailbox.Store
	Tasks tasklist.Store
}

// eachStore runs f against store/mem and against store/file on a
// temporary directory.
func eachStore(t *testing.T, f func(t *testing.T, s stores)) {
	t.Run("mem", func(t *testing.T) {
		m := mem.New(mem.Options{Now: clock})
		t.Cleanup(func() { m.Close() })
		f(t, stores{m.Teams(), m.Mail(), m.Tasks()})
	})
	t.Run("file", func(t *testing.T) {
		fs, err := file.Open(t.TempDir(), file.Options{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fs.Close() })
		f(t, stores{fs.Teams(), fs.Mail(), fs.Tasks()})
	})
}

const teamName = "alpha"

// newTeam creates team alpha led by team-lead with members alice and bob.
func newTeam(t *testing.T, s stores) team.Config {
	t.Helper()
	ctx := t.Context()
	c, err := team.Create(ctx, s.Teams, team.CreateOptions{Name: teamName, LeadType: "team-lead", Now: epoch, Pick: func(int) int { return 0 }})
	if err != nil {
		t.Fatalf("team.Create = %v", err)
	}
	for _, n := range []string{"alice", "bob"} {
		if _, err := team.AddMember(ctx, s.Teams, c.Name, team.Member{Name: n, TmuxPaneID: team.PaneInProcess, BackendType: team.BackendInProcess}, epoch); err != nil {
			t.Fatalf("AddMember(%s) = %v", n, err)
		}
	}
	c, err = s.Teams.Get(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// member returns the identity of a member of c.
func member(t *testing.T, c team.Config, name string) teamtool.Self {
	t.Helper()
	m, ok := c.Member(name)
	if !ok {
		t.Fatalf("no member %s", name)
	}
	if m.IsLead() {
		return teamtool.Self{Team: c.Name, Name: m.Name, Color: m.Color, PaneID: team.PaneLeader, Backend: team.BackendInProcess, Lead: true}
	}
	return teamtool.Self{Team: c.Name, Name: m.Name, Color: m.Color, PaneID: m.TmuxPaneID, Backend: m.BackendType}
}

// toolset is one agent's team tools, by name.
type toolset map[string]tool.Tool

func tools(cfg teamtool.Config) toolset {
	out := toolset{}
	for _, tl := range teamtool.Tools(cfg) {
		out[tl.Spec().Name] = tl
	}
	return out
}

// agentTools returns the tools of self on s.
func agentTools(s stores, self teamtool.Self, mod func(*teamtool.Config)) toolset {
	cfg := teamtool.Config{Teams: s.Teams, Mail: s.Mail, Tasks: s.Tasks, Self: func() teamtool.Self { return self }, Now: clock}
	if mod != nil {
		mod(&cfg)
	}
	return tools(cfg)
}

// call runs tool name with input and fails the test on a Go error.
func (ts toolset) call(t *testing.T, name, input string) tool.Result {
	t.Helper()
	tl, ok := ts[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	res, err := tl.Run(t.Context(), tool.Call{ID: "toolu_1", Name: name, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("%s.Run(%s) error = %v", name, input, err)
	}
	return res
}

// ok runs a call that must succeed and decodes its JSON result into v
// (when v is not nil).
func (ts toolset) ok(t *testing.T, name, input string, v any) tool.Result {
	t.Helper()
	res := ts.call(t, name, input)
	if res.IsError {
		t.Fatalf("%s(%s) = error %q; want success", name, input, res.Content)
	}
	if v != nil {
		reflect.ValueOf(v).Elem().SetZero() // decode into a fresh value, never merge into the last one
		if err := json.Unmarshal([]byte(res.Content), v); err != nil {
			t.Fatalf("%s(%s) result %q is not JSON: %v", name, input, res.Content, err)
		}
	}
	return res
}

// fails runs a call that must be an error result containing every want.
func (ts toolset) fails(t *testing.T, name, input string, want ...string) {
	t.Helper()
	res := ts.call(t, name, input)
	if !res.IsError {
		t.Fatalf("%s(%s) = success %q; want an error", name, input, res.Content)
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("%s(%s) = %q; want it to contain %q", name, input, res.Content, w)
		}
	}
}

// inbox returns the messages of agent in s.
func inbox(t *testing.T, s stores, agent string) []mailbox.Message {
	t.Helper()
	msgs, err := s.Mail.Read(t.Context(), teamName, agent, false)
	if err != nil {
		t.Fatalf("Read(%s) = %v", agent, err)
	}
	return msgs
}

// onlyFrame returns the frame of the single message in agent's inbox.
func onlyFrame(t *testing.T, s stores, agent string) (mailbox.Message, mailbox.Frame) {
	t.Helper()
	msgs := inbox(t, s, agent)
	if len(msgs) != 1 {
		t.Fatalf("inbox of %s has %d messages; want 1: %+v", agent, len(msgs), msgs)
	}
	f, err := mailbox.Decode(msgs[0].Text)
	if err != nil {
		t.Fatalf("Decode(%q) = %v", msgs[0].Text, err)
	}
	return msgs[0], f
}

// storeLead is the Lead of the tests: team.Create and team.Delete on the
// team store, remembering the team it leads.
type storeLead struct {
	teams team.Store

	mu   sync.Mutex
	team string // guarded by mu
}

func (l *storeLead) current() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.team
}

func (l *storeLead) CreateTeam(ctx context.Context, name, description, agentType string) (team.Config, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.team != "" {
		return team.Config{}, errors.New("you already lead team " + l.team + "; delete it first")
	}
	c, err := team.Create(ctx, l.teams, team.CreateOptions{Name: name, Description: description, LeadType: agentType, Now: epoch, Pick: func(int) int { return 0 }})
	if err != nil {
		return c, err
	}
	l.team = c.Name
	return c, nil
}

func (l *storeLead) DeleteTeam(ctx context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.team == "" {
		return "", errors.New("you lead no team")
	}
	if err := team.Delete(ctx, l.teams, l.team); err != nil {
		return "", err
	}
	name := l.team
	l.team = ""
	return name, nil
}

func toolCall(name, input string) tool.Call {
	return tool.Call{ID: "toolu_1", Name: name, Input: json.RawMessage(input)}
}

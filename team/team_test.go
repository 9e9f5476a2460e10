package team_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/team"
)

// observedConfig is the team file of docs/protocol.md section 2, with a
// pane teammate and a key troupe does not model in a member.
const observedConfig = `{
  "name": "session-fe1abf51",
  "createdAt": 1796217213228,
  "leadAgentId": "team-lead@session-fe1abf51",
  "leadSessionId": "fe1abf51-0000-4000-8000-000000000000",
  "leadProcess": { "pid": 31279, "pidSpace": "<pid-namespace-id>", "claimedAt": 1796217213225, "procStart": "93108" },
  "members": [
    {
      "agentId": "team-lead@session-fe1abf51",
      "name": "team-lead",
      "agentType": "team-lead",
      "joinedAt": 1796217213228,
      "tmuxPaneId": "leader",
      "cwd": "<lead cwd>",
      "subscriptions": [],
      "backendType": "in-process"
    },
    {
      "agentId": "helper@session-fe1abf51",
      "name": "helper",
      "color": "blue",
      "joinedAt": 1796217216231,
      "tmuxPaneId": "%1",
      "subscriptions": [],
      "model": "claude-opus-5-5",
      "prompt": "<initial prompt>",
      "planModeRequired": false,
      "cwd": "<cwd>",
      "backendType": "tmux",
      "isActive": false,
      "futureKey": {"nested": [1, 2]}
    }
  ]
}`

func TestConfigDecodeObserved(t *testing.T) {
	var c team.Config
	if err := json.Unmarshal([]byte(observedConfig), &c); err != nil {
		t.Fatalf("decode observed team file: %v", err)
	}
	f := false
	want := team.Config{
		Name: "session-fe1abf51", CreatedAt: 1796217213228,
		LeadAgentID: "team-lead@session-fe1abf51", LeadSessionID: "fe1abf51-0000-4000-8000-000000000000",
		Members: []team.Member{
			{AgentID: "team-lead@session-fe1abf51", Name: "team-lead", AgentType: "team-lead", JoinedAt: 1796217213228,
				TmuxPaneID: "leader", Cwd: "<lead cwd>", Subscriptions: []string{}, BackendType: "in-process"},
			{AgentID: "helper@session-fe1abf51", Name: "helper", Color: "blue", JoinedAt: 1796217216231, TmuxPaneID: "%1",
				Subscriptions: []string{}, Model: "claude-opus-5-5", Prompt: "<initial prompt>", Cwd: "<cwd>",
				BackendType: "tmux", IsActive: &f,
				Extra: map[string]json.RawMessage{"futureKey": json.RawMessage(`{"nested": [1, 2]}`)}},
		},
		Extra: map[string]json.RawMessage{"leadProcess": json.RawMessage(`{ "pid": 31279, "pidSpace": "<pid-namespace-id>", "claimedAt": 1796217213225, "procStart": "93108" }`)},
	}
	if diff := cmp.Diff(want, c, cmp.Comparer(jsonEqual)); diff != "" {
		t.Errorf("decoded team file mismatch (-want +got):\n%s", diff)
	}
	if c.Members[1].Active() || !c.Members[0].Active() {
		t.Errorf("Active() = %v, %v; want true (absent isActive), false", c.Members[0].Active(), c.Members[1].Active())
	}
	if !c.Members[0].IsLead() || c.Members[1].IsLead() {
		t.Errorf("IsLead() = %v, %v; want true, false", c.Members[0].IsLead(), c.Members[1].IsLead())
	}
	if diff := cmp.Diff([]string{"team-lead", "helper"}, c.Names()); diff != "" {
		t.Errorf("Names() mismatch (-want +got):\n%s", diff)
	}

	// Encoding keeps every key, and decoding again gives the same value.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var orig, round map[string]any
	_ = json.Unmarshal([]byte(observedConfig), &orig)
	if err := json.Unmarshal(b, &round); err != nil {
		t.Fatalf("encoded team file is not JSON: %v", err)
	}
	// planModeRequired is omitempty: false is dropped, which Claude Code
	// reads the same as false.
	delete(orig["members"].([]any)[1].(map[string]any), "planModeRequired")
	if diff := cmp.Diff(orig, round); diff != "" {
		t.Errorf("encoded team file differs from the original (-orig +encoded):\n%s", diff)
	}
	var again team.Config
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("decode encoded team file: %v", err)
	}
	if diff := cmp.Diff(c, again, cmp.Comparer(jsonEqual)); diff != "" {
		t.Errorf("decode(encode(c)) mismatch (-want +got):\n%s", diff)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

func TestConfigEncodeShape(t *testing.T) {
	c := team.Config{Name: "crew", LeadAgentID: "team-lead@crew", Members: []team.Member{{AgentID: "team-lead@crew", Name: "team-lead", TmuxPaneID: "leader"}}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	lead := got["members"].([]any)[0].(map[string]any)
	if _, ok := lead["color"]; ok {
		t.Errorf("lead member %s has a color key; want none on disk", b)
	}
	if subs, ok := lead["subscriptions"].([]any); !ok || len(subs) != 0 {
		t.Errorf("lead subscriptions = %v; want []", lead["subscriptions"])
	}
	b, _ = json.Marshal(team.Config{Name: "empty"})
	if !strings.Contains(string(b), `"members":[]`) {
		t.Errorf("a Config with no members encodes as %s; want \"members\":[]", b)
	}
}

func TestConfigDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, mention string
	}{
		{"not an object", `[]`, ""},
		{"null", `null`, ""},
		{"createdAt string", `{"name":"x","createdAt":"yesterday","members":[]}`, "createdAt"},
		{"name number", `{"name":5,"members":[]}`, "name"},
		{"members object", `{"name":"x","members":{}}`, "members"},
		{"member without agentId", `{"name":"x","members":[{"name":"a"}]}`, "agentId"},
		{"member without name", `{"name":"x","members":[{"agentId":"a@x"}]}`, "name"},
		{"member isActive string", `{"name":"x","members":[{"agentId":"a@x","name":"a","isActive":"yes"}]}`, "isActive"},
		{"member subscriptions number", `{"name":"x","members":[{"agentId":"a@x","name":"a","subscriptions":3}]}`, "subscriptions"},
	}
	for _, tt := range tests {
		var c team.Config
		err := json.Unmarshal([]byte(tt.in), &c)
		if err == nil {
			t.Errorf("decode %s (%s) succeeded; want an error", tt.name, tt.in)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("decode %s error = %q; want it to name %q", tt.name, err, tt.mention)
		}
	}
}

func TestConfigClone(t *testing.T) {
	var c team.Config
	if err := json.Unmarshal([]byte(observedConfig), &c); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	cl := c.Clone()
	if diff := cmp.Diff(c, cl, cmp.Comparer(jsonEqual)); diff != "" {
		t.Fatalf("Clone mismatch (-want +got):\n%s", diff)
	}
	for i, m := range cl.Members {
		if m.IsActive != nil && m.IsActive == c.Members[i].IsActive {
			t.Fatalf("member %d of the clone shares its isActive flag with the original", i)
		}
		for j := range i {
			if m.IsActive != nil && m.IsActive == cl.Members[j].IsActive {
				t.Fatalf("members %d and %d of the clone share one isActive flag", j, i)
			}
		}
	}
	*cl.Members[1].IsActive = true
	cl.Members[1].Extra["futureKey"][1] = 'X'
	cl.Extra["leadProcess"] = json.RawMessage(`1`)
	cl.Members[0].Subscriptions = append(cl.Members[0].Subscriptions, "s")
	if got, err := json.Marshal(c); err != nil || string(got) != string(want) {
		t.Errorf("changing a Clone changed the original: %s, %v; want %s", got, err, want)
	}
	m, ok := c.Member("helper")
	if !ok || m.Color != "blue" {
		t.Fatalf("Member(helper) = %v, %v; want the blue helper", m, ok)
	}
	m.Color = "red"
	if c.Members[1].Color != "red" {
		t.Errorf("Member returns a copy; want a pointer into the roster")
	}
	if _, ok := c.Member("nobody"); ok {
		t.Errorf("Member(nobody) found someone")
	}
}

// TestConfigCloneFlags: each member of a clone has an isActive flag of its
// own, apart from the original's and from the other members'.
func TestConfigCloneFlags(t *testing.T) {
	tru, fal := true, false
	c := team.Config{Name: "crew", Members: []team.Member{
		{Name: "a", IsActive: &tru}, {Name: "b"}, {Name: "c", IsActive: &fal}, {Name: "d", IsActive: &tru},
	}}
	cl := c.Clone()
	for i := range cl.Members {
		if m := &cl.Members[i]; m.IsActive != nil {
			*m.IsActive = !*m.IsActive
		}
	}
	var got, orig []string
	for i := range cl.Members {
		got = append(got, fmt.Sprint(flag(cl.Members[i].IsActive)))
		orig = append(orig, fmt.Sprint(flag(c.Members[i].IsActive)))
	}
	if g, w := strings.Join(got, ","), "false,nil,true,false"; g != w {
		t.Errorf("clone's flags after flipping each = %s; want %s", g, w)
	}
	if g, w := strings.Join(orig, ","), "true,nil,false,true"; g != w {
		t.Errorf("original's flags after flipping the clone's = %s; want %s", g, w)
	}
}

func flag(b *bool) any {
	if b == nil {
		return "nil"
	}
	return *b
}

// BenchmarkConfigClone clones a roster of 1,000 members, as every team
// update does (twice).
func BenchmarkConfigClone(b *testing.B) {
	c := team.Config{Name: "crew"}
	for i := range 1000 {
		active := i%2 == 0
		c.Members = append(c.Members, team.Member{AgentID: fmt.Sprintf("t%04d@crew", i), Name: fmt.Sprintf("t%04d", i),
			Color: "blue", JoinedAt: int64(i), TmuxPaneID: "in-process", Cwd: "/work", Subscriptions: []string{}, BackendType: "in-process", IsActive: &active})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Clone()
	}
}

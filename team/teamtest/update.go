package teamtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/team"
)

func testUpdateFnError(t *testing.T, s stores) {
	before := create(t, s, "crew")
	want := &testError{3}
	_, err := s.teams.Update(t.Context(), "crew", func(c *team.Config) error {
		c.Description = "half done"
		c.Members = nil
		return want
	})
	var got *testError
	if !errors.As(err, &got) || got != want || !errors.Is(err, want) {
		t.Errorf("Update with a failing fn error = %v; want %v as is", err, want)
	}
	if diff := cmp.Diff(before, get(t, s, "crew"), equateEmpty); diff != "" {
		t.Errorf("a failed Update changed the team (-before +after):\n%s", diff)
	}
	updated, err := s.teams.Update(t.Context(), "crew", func(c *team.Config) error { c.Description = "done"; return nil })
	if err != nil || updated.Description != "done" || get(t, s, "crew").Description != "done" {
		t.Errorf("Update(description) = %q, %v; want \"done\" returned and stored", updated.Description, err)
	}
}

// observedConfig is a team file as Claude Code writes it (docs/protocol.md
// section 2), with keys troupe does not model at both levels.
const observedConfig = `{
  "name": "session-fe1abf51",
  "createdAt": 1796217213228,
  "leadAgentId": "team-lead@session-fe1abf51",
  "leadSessionId": "fe1abf51-0000-4000-8000-000000000000",
  "leadProcess": { "pid": 31279, "pidSpace": "pid:[4026531836]", "claimedAt": 1796217213225, "procStart": "93108" },
  "futureTopLevel": [1, {"deep": true}],
  "members": [
    {
      "agentId": "team-lead@session-fe1abf51",
      "name": "team-lead",
      "agentType": "team-lead",
      "joinedAt": 1796217213228,
      "tmuxPaneId": "leader",
      "cwd": "/work",
      "subscriptions": [],
      "backendType": "in-process",
      "futureMemberKey": {"x": "y"}
    }
  ]
}`

func testExtraKeysSurvive(t *testing.T, s stores) {
	ctx := t.Context()
	var c team.Config
	if err := json.Unmarshal([]byte(observedConfig), &c); err != nil {
		t.Fatalf("decode observed team file: %v", err)
	}
	if err := s.teams.Create(ctx, c); err != nil {
		t.Fatalf("Store.Create error: %v", err)
	}
	add(t, s, c.Name, "helper")
	if err := team.SetActive(ctx, s.teams, c.Name, team.LeadName, true); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, c.Name)
	for _, k := range []string{"leadProcess", "futureTopLevel"} {
		if !jsonEqual(c.Extra[k], got.Extra[k]) {
			t.Errorf("config key %q after updates = %s; want %s", k, got.Extra[k], c.Extra[k])
		}
	}
	lead, _ := got.Member(team.LeadName)
	if !jsonEqual(c.Members[0].Extra["futureMemberKey"], lead.Extra["futureMemberKey"]) {
		t.Errorf("member key futureMemberKey after updates = %s; want %s", lead.Extra["futureMemberKey"], c.Members[0].Extra["futureMemberKey"])
	}
	if len(got.Members) != 2 || got.Members[1].Name != "helper" {
		t.Errorf("roster = %q; want [team-lead helper]", got.Names())
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

func testNoAliasing(t *testing.T, s stores) {
	ctx := t.Context()
	var c team.Config
	if err := json.Unmarshal([]byte(observedConfig), &c); err != nil {
		t.Fatal(err)
	}
	if err := s.teams.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := team.SetActive(ctx, s.teams, c.Name, team.LeadName, false); err != nil {
		t.Fatal(err)
	}
	// Snapshot as JSON: a Config value could itself alias the store.
	want, err := json.Marshal(get(t, s, c.Name))
	if err != nil {
		t.Fatal(err)
	}

	c.Members[0].Subscriptions = append(c.Members[0].Subscriptions, "x")
	c.Extra["leadProcess"][2] = 'X'
	got := get(t, s, c.Name)
	*got.Members[0].IsActive = true
	got.Members[0].Extra["futureMemberKey"][2] = 'X'
	got.Members = append(got.Members[:0], team.Member{Name: "intruder"})
	var kept *team.Config
	if _, err := s.teams.Update(ctx, c.Name, func(c *team.Config) error { kept = c; return nil }); err != nil {
		t.Fatal(err)
	}
	kept.Name = "mutated after Update returned"
	kept.Members[0].Cwd = "/elsewhere"

	after, err := json.Marshal(get(t, s, c.Name))
	if err != nil {
		t.Fatalf("stored team no longer encodes after callers changed their copies: %v", err)
	}
	if diff := cmp.Diff(string(want), string(after)); diff != "" {
		t.Errorf("stored team changed through a caller's copy (-want +got):\n%s", diff)
	}
}

// testConcurrentUpdate runs Goroutines × 10 read-modify-writes, each
// yielding inside fn to widen the race window: none may be lost.
func testConcurrentUpdate(t *testing.T, s stores) {
	create(t, s, "crew")
	const per = 10
	var wg sync.WaitGroup
	for g := range Goroutines {
		wg.Go(func() {
			for i := range per {
				_, err := s.teams.Update(t.Context(), "crew", func(c *team.Config) error {
					ids := c.HiddenPaneIDs
					runtime.Gosched()
					c.HiddenPaneIDs = append(ids, fmt.Sprintf("%%%d-%d", g, i))
					return nil
				})
				if err != nil {
					t.Errorf("Update #%d.%d error: %v", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := get(t, s, "crew").HiddenPaneIDs; len(got) != Goroutines*per {
		t.Errorf("after %d concurrent Updates, %d appends survived; want all (lost updates)", Goroutines*per, len(got))
	}
}

// testHelpersNoAliasing: the members that AddMember and UpdateMember take
// and hand back share nothing with the stored team (stores implementing
// team.Mutator keep the config the helpers changed, without a copy).
func testHelpersNoAliasing(t *testing.T, s stores) {
	ctx := t.Context()
	create(t, s, "crew")
	member := func(name string) team.Member {
		active := false
		return team.Member{Name: name, Subscriptions: []string{"news"}, IsActive: &active, Extra: map[string]json.RawMessage{"future": json.RawMessage(`[1]`)}}
	}
	// step runs a helper, then changes every member it took or handed
	// back, and checks that the stored team did not change.
	step := func(what string, do func() ([]*team.Member, error)) {
		t.Helper()
		ms, err := do()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, err := json.Marshal(get(t, s, "crew"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			m.Subscriptions[0] = "intruder"
			m.Extra["future"][1] = '9'
			*m.IsActive = true
		}
		after, err := json.Marshal(get(t, s, "crew"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(after)); diff != "" {
			t.Errorf("%s: the stored team changed through a member the helper took or handed back (-want +got):\n%s", what, diff)
		}
	}
	step("AddMember", func() ([]*team.Member, error) {
		in := member("ann")
		out, err := team.AddMember(ctx, s.teams, "crew", in, now)
		return []*team.Member{&in, &out}, err
	})
	step("AddMember of a member already there", func() ([]*team.Member, error) {
		in := member("ann")
		out, err := team.AddMember(ctx, s.teams, "crew", in, now)
		return []*team.Member{&out}, err
	})
	step("UpdateMember", func() ([]*team.Member, error) {
		out, err := team.UpdateMember(ctx, s.teams, "crew", "ann", func(m *team.Member) error { m.Model = "m1"; return nil })
		return []*team.Member{&out}, err
	})
}

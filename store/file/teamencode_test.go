package file

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/troupe-dev/troupe/internal/atomicfile"
	"github.com/troupe-dev/troupe/team"
)

// teamFileSeeds are team files as Claude Code and troupe write them.
var teamFileSeeds = []string{
	`{"name":"crew","createdAt":1,"leadAgentId":"team-lead@crew","members":[]}`,
	`{"name":"crew","createdAt":1,"leadAgentId":"team-lead@crew"}`,
	`{"name":"s","createdAt":17,"leadAgentId":"team-lead@s","leadProcess":{"pid":3,"members":[]},
	  "members":[{"agentId":"team-lead@s","name":"team-lead","joinedAt":1,"tmuxPaneId":"leader","cwd":"/w","subscriptions":[]},
	  {"agentId":"a@s","name":"a","joinedAt":2,"tmuxPaneId":"%3","cwd":"/w","subscriptions":["x"],"isActive":false,"future":{"members":[]}},
	  {"agentId":"b@s","name":"b","prompt":"<html> & \"quotes\"\nline","joinedAt":3,"tmuxPaneId":"in-process","cwd":"/w","subscriptions":[],"isActive":true}],
	  "futureTopLevel":[1,{"deep":true}]}`,
}

// checkEncoding fails unless encodeSnap gives json.MarshalIndent's bytes
// for c, reusing prev's member entries (nil: from scratch), and the
// snapshot's bytes are the ones it compares equal to.
func checkEncoding(t *testing.T, c team.Config, prev *teamSnap) *teamSnap {
	t.Helper()
	want, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatalf("MarshalIndent: %v", err)
	}
	snap, err := encodeSnap(c, prev, true)
	if err != nil {
		t.Fatalf("encodeSnap: %v", err)
	}
	if got := snap.bytes(); !bytes.Equal(got, want) {
		t.Fatalf("encodeSnap = \n%s\nwant (MarshalIndent)\n%s", got, want)
	}
	if snap.size != len(want) || !snap.equal(want) {
		t.Fatalf("snapshot of size %d: equal(its bytes) = false", snap.size)
	}
	if len(want) > 0 && snap.equal(append(want[:len(want)-1:len(want)-1], 'x')) {
		t.Fatalf("snapshot equal to bytes that differ in the last one")
	}
	return snap
}

func TestEncodeConfigMatchesMarshalIndent(t *testing.T) {
	for _, seed := range teamFileSeeds {
		var c team.Config
		if err := json.Unmarshal([]byte(seed), &c); err != nil {
			t.Fatalf("seed %s: %v", seed, err)
		}
		prev := checkEncoding(t, c, nil)
		// A flag flipped, a member added and one removed, each reusing
		// the encodings of the members that did not change.
		next := c.Clone()
		for i := range next.Members {
			v := !next.Members[i].Active()
			next.Members[i].IsActive = &v
			snap := checkEncoding(t, next, prev)
			for j := range snap.members {
				// Members 0..i are flipped, the others as in prev.
				if reused := snap.members[j] == prev.members[j]; reused != (j > i) {
					t.Errorf("members 0-%d flipped: member %d's entry reused = %v; want %v", i, j, reused, j > i)
				}
			}
		}
		next.Members = append(next.Members, team.Member{AgentID: "z@s", Name: "z", Cwd: "/"})
		checkEncoding(t, next, prev)
		if len(next.Members) > 1 {
			next.Members = next.Members[1:]
			checkEncoding(t, next, prev)
		}
	}
}

// FuzzEncodeTeamFile checks the incremental team-file encoder against
// json.MarshalIndent on any team file that decodes.
func FuzzEncodeTeamFile(f *testing.F) {
	for _, seed := range teamFileSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c team.Config
		if json.Unmarshal(data, &c) != nil {
			return
		}
		if _, err := json.MarshalIndent(c, "", "  "); err != nil {
			return
		}
		prev := checkEncoding(t, c, nil)
		if len(c.Members) > 0 {
			next := c.Clone()
			last := &next.Members[len(next.Members)-1]
			v := !last.Active()
			last.IsActive = &v
			checkEncoding(t, next, prev)
		}
	})
}

// TestSameMemberCoversEveryField fails when team.Member gains a field that
// sameMember does not compare: a change to it would then not be written.
func TestSameMemberCoversEveryField(t *testing.T) {
	if n := reflect.TypeFor[team.Member]().NumField(); n != memberFields {
		t.Fatalf("team.Member has %d fields; sameMember compares %d: add the new ones to it", n, memberFields)
	}
	base := team.Member{AgentID: "a@s", Name: "a", Subscriptions: []string{"x"}, Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}
	tru := true
	changes := []func(*team.Member){
		func(m *team.Member) { m.AgentID = "b@s" }, func(m *team.Member) { m.Name = "b" },
		func(m *team.Member) { m.AgentType = "x" }, func(m *team.Member) { m.Model = "x" },
		func(m *team.Member) { m.Prompt = "x" }, func(m *team.Member) { m.Color = "x" },
		func(m *team.Member) { m.PlanModeRequired = true }, func(m *team.Member) { m.JoinedAt = 9 },
		func(m *team.Member) { m.TmuxPaneID = "x" }, func(m *team.Member) { m.Cwd = "x" },
		func(m *team.Member) { m.Subscriptions = []string{"y"} }, func(m *team.Member) { m.BackendType = "x" },
		func(m *team.Member) { m.IsActive = &tru }, func(m *team.Member) { m.Mode = "x" },
		func(m *team.Member) { m.Extra = map[string]json.RawMessage{"k": json.RawMessage(`2`)} },
	}
	if len(changes) != memberFields {
		t.Fatalf("%d changes tested; want one per field (%d)", len(changes), memberFields)
	}
	for i, change := range changes {
		m := base.Clone()
		change(&m)
		if sameMember(base, m) {
			t.Errorf("change %d: sameMember = true; want false", i)
		}
	}
	if !sameMember(base, base.Clone()) {
		t.Errorf("sameMember(m, clone of m) = false; want true")
	}
}

func TestTeamSnapTrusted(t *testing.T) {
	seen := time.Unix(100, 250_000_000) // fine times: whole seconds are TestSettledBefore's
	at := func(d time.Duration) int64 { return seen.Add(d).UnixNano() }
	tests := []struct {
		name   string
		id     atomicfile.Identity
		trusts bool
	}{
		{"unknown identity", atomicfile.Identity{}, false},
		{"changed long before the read", atomicfile.Identity{Exists: true, MtimeNs: at(-time.Second), CtimeNs: at(-time.Second)}, true},
		{"changed just before the read", atomicfile.Identity{Exists: true, MtimeNs: at(-time.Second), CtimeNs: at(-time.Millisecond)}, false},
		{"mtime set just before the read", atomicfile.Identity{Exists: true, MtimeNs: at(-time.Millisecond), CtimeNs: at(-time.Second)}, false},
		{"changed after the read began", atomicfile.Identity{Exists: true, MtimeNs: at(time.Millisecond), CtimeNs: at(time.Millisecond)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &teamSnap{id: tt.id, seen: seen}
			if got := snap.trusted(); got != tt.trusts {
				t.Errorf("trusted() = %v; want %v", got, tt.trusts)
			}
		})
	}
}

// TestShareMembers: a team file decoded after another process changed one
// member shares the unchanged members' strings with the snapshot before,
// and decodes to exactly what the file says.
func TestShareMembers(t *testing.T) {
	root := t.TempDir()
	a, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(root, Options{}) // another process: a cache of its own
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	if _, err := team.Create(ctx, a.Teams(), team.CreateOptions{Name: "crew", Now: time.Now(), Pick: func(int) int { return 0 }}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ann", "bob", "cid"} {
		if _, err := team.AddMember(ctx, a.Teams(), "crew", team.Member{Name: name, Cwd: "/work/" + name}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	path := a.Teams().configPath("crew")
	before, err := b.Teams().snapshot(ctx, "crew", path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := team.SetActive(ctx, a.Teams(), "crew", "bob", false); err != nil {
		t.Fatal(err)
	}
	after, err := b.Teams().snapshot(ctx, "crew", path, false)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.Teams().Get(ctx, "crew")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(after.config())
	if w, _ := json.Marshal(want); !bytes.Equal(got, w) {
		t.Fatalf("decoded after the change:\n%s\nwant\n%s", got, w)
	}
	for i, e := range after.members {
		m := e.m
		shared := unsafe.StringData(m.Cwd) == unsafe.StringData(before.members[i].m.Cwd)
		if changed := m.Name == "bob"; shared == changed {
			t.Errorf("member %s: shares its strings with the snapshot before = %v; want %v", m.Name, shared, !changed)
		}
	}
}

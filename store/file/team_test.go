package file_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/troupe-dev/troupe/internal/lockfile"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
	"github.com/troupe-dev/troupe/team/teamtest"
)

// ftClaudeTeamFile is a team file shaped like Claude Code's (docs/protocol.md
// section 2), with keys troupe does not model: leadProcess, and
// customKey on a member.
const ftClaudeTeamFile = `{
  "name": "session-fe1abf51",
  "createdAt": 1796217213228,
  "leadAgentId": "team-lead@session-fe1abf51",
  "leadSessionId": "fe1abf51-0000-4000-8000-000000000000",
  "leadProcess": { "pid": 31279, "pidSpace": "pid:[4026531836]", "claimedAt": 1796217213225, "procStart": "93108" },
  "members": [
    {
      "agentId": "team-lead@session-fe1abf51",
      "name": "team-lead",
      "agentType": "team-lead",
      "joinedAt": 1796217213228,
      "tmuxPaneId": "leader",
      "cwd": "/home/u/project",
      "subscriptions": [],
      "backendType": "in-process"
    },
    {
      "agentId": "helper@session-fe1abf51",
      "name": "helper",
      "color": "blue",
      "joinedAt": 1796217216231,
      "tmuxPaneId": "in-process",
      "subscriptions": [],
      "model": "claude-opus-5-5",
      "prompt": "say hello",
      "planModeRequired": false,
      "cwd": "/home/u/project",
      "backendType": "in-process",
      "customKey": { "nested": [1, 2, 3] }
    }
  ]
}`

func TestTeamConformance(t *testing.T) {
	teamtest.Run(t, func(t *testing.T) (team.Store, mailbox.Store, tasklist.Store) {
		s := ftOpen(t, t.TempDir(), file.Options{})
		return s.Teams(), s.Mail(), s.Tasks()
	})
}

func ftWriteTeamFile(t *testing.T, root, dir, content string) string {
	t.Helper()
	d := filepath.Join(root, "teams", dir)
	if err := os.MkdirAll(filepath.Join(d, "inboxes"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(d, "config.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ftDecodeMap(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return m
}

func TestTeamClaudeCodeFileRoundTrip(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	path := ftWriteTeamFile(t, root, "session-fe1abf51", ftClaudeTeamFile)
	ctx := t.Context()

	c, err := s.Teams().Get(ctx, "session-fe1abf51")
	if err != nil {
		t.Fatalf("Get = %v", err)
	}
	if got, want := c.Names(), []string{"team-lead", "helper"}; !slices.Equal(got, want) {
		t.Errorf("Get: members %v; want %v", got, want)
	}
	if _, ok := c.Extra["leadProcess"]; !ok {
		t.Errorf("Get: Extra = %v; want leadProcess kept", c.Extra)
	}

	if _, err := team.AddMember(ctx, s.Teams(), c.Name, team.Member{Name: "worker", Cwd: "/w"}, time.UnixMilli(1796217300000)); err != nil {
		t.Fatalf("AddMember = %v", err)
	}
	if err := team.SetActive(ctx, s.Teams(), c.Name, "helper", false); err != nil {
		t.Fatalf("SetActive = %v", err)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "{\n  \"name\": ") {
		t.Errorf("team file is not 2-space indented JSON:\n%s", raw)
	}
	got := ftDecodeMap(t, raw)
	want := ftDecodeMap(t, []byte(ftClaudeTeamFile))
	// What the updates changed, on top of the original file:
	wantMembers := want["members"].([]any)
	wantMembers[1].(map[string]any)["isActive"] = false
	// team.Member encodes planModeRequired with omitempty, so a false value
	// is dropped on rewrite (Claude Code reads absent as false).
	delete(wantMembers[1].(map[string]any), "planModeRequired")
	wantMembers = append(wantMembers, map[string]any{
		"agentId": "worker@session-fe1abf51", "name": "worker", "color": "green",
		"joinedAt": float64(1796217300000), "tmuxPaneId": "in-process", "cwd": "/w",
		"subscriptions": []any{}, "backendType": "in-process",
	})
	want["members"] = wantMembers
	// The new member's color is chosen by team; take it from the file.
	if ms, ok := got["members"].([]any); ok && len(ms) == 3 {
		wantMembers[2].(map[string]any)["color"] = ms[2].(map[string]any)["color"]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("team file after updates (-want +got):\n%s", diff)
	}
}

func TestTeamCreateGetList(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "beta")
	ftNewTeam(t, s, "alpha")

	if err := s.Teams().Create(ctx, ftLeadConfig("alpha")); !errors.Is(err, team.ErrExists) {
		t.Errorf("Create(alpha) again = %v; want ErrExists", err)
	}
	// team.Create picks a suffixed name for a taken one.
	c, err := team.Create(ctx, s.Teams(), team.CreateOptions{Name: "Alpha", Pick: ftPick})
	if err != nil || c.Name == "alpha" {
		t.Errorf("team.Create(Alpha) = %q, %v; want a new suffixed name", c.Name, err)
	}
	for _, dir := range []string{"alpha", "beta"} {
		if fi, err := os.Stat(filepath.Join(root, "teams", dir, "inboxes")); err != nil || !fi.IsDir() {
			t.Errorf("teams/%s/inboxes: %v; want a folder", dir, err)
		}
	}
	// A folder left by a crash before config.json was written is reused.
	if err := os.MkdirAll(filepath.Join(root, "teams", "crashed"), 0o755); err != nil {
		t.Fatal(err)
	}
	ftNewTeam(t, s, "crashed")
	// Folders being deleted, and folders without a team file, are not teams.
	ftWriteTeamFile(t, root, "gamma.deleted-0123abcd", `{"name":"gamma","createdAt":1,"leadAgentId":"x","members":[]}`)
	if err := os.MkdirAll(filepath.Join(root, "teams", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := s.Teams().List(ctx)
	if err != nil {
		t.Fatalf("List = %v", err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if want := []string{"alpha", c.Name, "beta", "crashed"}; !slices.Equal(names, want) {
		t.Errorf("List = %v; want %v", names, want)
	}
	if _, err := s.Teams().Get(ctx, "nope"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get(nope) = %v; want ErrNotFound", err)
	}
}

func TestTeamNamesRefused(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	// A team folder outside teams/ that a path escape could reach.
	ftWriteTeamFile(t, root, "../escape", `{"name":"x","createdAt":1,"leadAgentId":"x","members":[]}`)
	for _, name := range []string{"", "My Team", "UPPER", "../escape", "a/b", `a\b`, "..", ".", "a..b", "nul\x00", "/abs", strings.Repeat("a", 65)} {
		if _, err := s.Teams().Get(ctx, name); !errors.Is(err, team.ErrInvalidName) || errors.Is(err, team.ErrNotFound) {
			t.Errorf("Get(%q) = %v; want ErrInvalidName", name, err)
		}
		if _, err := s.Teams().Update(ctx, name, func(*team.Config) error { return nil }); !errors.Is(err, team.ErrInvalidName) {
			t.Errorf("Update(%q) = %v; want ErrInvalidName", name, err)
		}
		if err := s.Teams().Delete(ctx, name, nil); !errors.Is(err, team.ErrInvalidName) {
			t.Errorf("Delete(%q) = %v; want ErrInvalidName", name, err)
		}
		if err := s.Teams().Create(ctx, ftLeadConfig(name)); !errors.Is(err, team.ErrInvalidName) {
			t.Errorf("Create(%q) = %v; want ErrInvalidName", name, err)
		}
	}
	// Missing canonical names are simply not found, and nothing is made.
	if _, err := s.Teams().Update(ctx, "ghost", func(*team.Config) error { return nil }); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Update(ghost) = %v; want ErrNotFound", err)
	}
	if err := s.Teams().Delete(ctx, "ghost", nil); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Delete(ghost) = %v; want ErrNotFound", err)
	}
	if _, err := os.Stat(filepath.Join(root, "teams", "ghost")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("teams/ghost after Update and Delete: %v; want nothing created", err)
	}
}

func TestTeamCorruptFile(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "good")
	tests := []struct {
		name, content, field string
	}{
		{"wrongtype", `{"name":"wrongtype","createdAt":"yesterday","leadAgentId":"x","members":[]}`, "createdAt"},
		{"noagentid", `{"name":"noagentid","createdAt":1,"leadAgentId":"x","members":[{"name":"a"}]}`, "agentId"},
		{"truncated", `{"name":"truncated","createdAt":1,"lea`, "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ftWriteTeamFile(t, root, tt.name, tt.content)
			_, err := s.Teams().Get(ctx, tt.name)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Get(%s) = %v; want an error naming %s and %s", tt.name, err, path, tt.field)
			}
			if errors.Is(err, team.ErrNotFound) {
				t.Errorf("Get(%s) = %v; must not match ErrNotFound", tt.name, err)
			}
			_, err = s.Teams().Update(ctx, tt.name, func(c *team.Config) error { return nil })
			if err == nil || errors.Is(err, team.ErrNotFound) || !strings.Contains(err.Error(), path) {
				t.Errorf("Update(%s) = %v; want an error naming %s", tt.name, err, path)
			}
			if raw, _ := os.ReadFile(path); string(raw) != tt.content {
				t.Errorf("Update(%s) changed the corrupt file to %s", tt.name, raw)
			}
		})
	}
	got, err := s.Teams().List(ctx)
	if len(got) != 1 || got[0].Name != "good" {
		t.Errorf("List = %d teams; want only good", len(got))
	}
	for _, tt := range tests {
		if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "teams", tt.name, "config.json")) {
			t.Errorf("List error = %v; want it to name %s's file", err, tt.name)
		}
	}
}

func TestTeamUpdateErrorsAndName(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "alpha")
	path := filepath.Join(root, "teams", "alpha", "config.json")
	before, _ := os.ReadFile(path)
	boom := errors.New("boom")
	_, err := s.Teams().Update(ctx, "alpha", func(c *team.Config) error {
		c.Description = "changed"
		return boom
	})
	if err != boom {
		t.Errorf("Update with failing fn = %v; want the fn's error as is", err)
	}
	if _, err := s.Teams().Update(ctx, "alpha", func(c *team.Config) error { c.Name = "beta"; return nil }); err == nil {
		t.Errorf("Update renaming the team = nil; want an error")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("failed updates changed the team file:\n%s", after)
	}
	if _, err := team.AddMember(ctx, s.Teams(), "alpha", team.Member{Name: "team-lead"}, time.Now()); err == nil {
		t.Errorf("AddMember(team-lead) = nil; want an error")
	}
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock folder after updates: %v; want it released", err)
	}
}

func TestTeamConcurrentUpdate(t *testing.T) {
	const goroutines, procs, each = 8, 4, 5
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "busy")

	var children []*ftChild
	for p := range procs {
		c := ftStartChild(t, ftChildSpec{Role: "team-add", Root: root, Name: "busy", Agent: fmt.Sprintf("p%d", p), N: each})
		c.expect(t, "ready")
		children = append(children, c)
	}
	for _, c := range children {
		c.send(t, "go")
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				m := team.Member{Name: fmt.Sprintf("g%d-%d", g, i), Cwd: "/tmp"}
				if _, err := team.AddMember(ctx, s.Teams(), "busy", m, time.Now()); err != nil {
					t.Errorf("AddMember(%s) = %v", m.Name, err)
				}
			}
		})
	}
	wg.Wait()
	for _, c := range children {
		if out := c.wait(t); !slices.Equal(out, []string{"done"}) {
			t.Errorf("child reported %q; want [done]", out)
		}
	}

	c, err := s.Teams().Get(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{team.LeadName}
	for g := range goroutines {
		for i := range each {
			want = append(want, fmt.Sprintf("g%d-%d", g, i))
		}
	}
	for p := range procs {
		for i := range each {
			want = append(want, fmt.Sprintf("p%d-%d", p, i))
		}
	}
	got := c.Names()
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members after concurrent adds (-want +got):\n%s", diff)
	}
}

func TestTeamCreateRace(t *testing.T) {
	const procs, goroutines, names = 4, 4, 10
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	// Some names have a folder left by a crash, without config.json.
	for _, i := range []int{3, 7} {
		if err := os.MkdirAll(filepath.Join(root, "teams", fmt.Sprintf("race-%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var children []*ftChild
	for range procs {
		c := ftStartChild(t, ftChildSpec{Role: "team-create", Root: root, Name: "race", N: names})
		c.expect(t, "ready")
		children = append(children, c)
	}
	var (
		mu      sync.Mutex
		results []string
	)
	for _, c := range children {
		c.send(t, "go")
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range names {
				name := fmt.Sprintf("race-%d", i)
				err := s.Teams().Create(ctx, ftLeadConfig(name))
				r := name + " won"
				if errors.Is(err, team.ErrExists) {
					r = name + " exists"
				} else if err != nil {
					r = fmt.Sprintf("%s error %v", name, err)
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, c := range children {
		results = append(results, c.wait(t)...)
	}
	wins := map[string]int{}
	for _, r := range results {
		name, verdict, _ := strings.Cut(r, " ")
		switch verdict {
		case "won":
			wins[name]++
		case "exists":
		default:
			t.Errorf("Create(%s): %s", name, verdict)
		}
	}
	for i := range names {
		name := fmt.Sprintf("race-%d", i)
		if wins[name] != 1 {
			t.Errorf("Create(%s) won %d times among %d creators; want exactly 1", name, wins[name], procs+goroutines)
		}
		if _, err := s.Teams().Get(ctx, name); err != nil {
			t.Errorf("Get(%s) = %v", name, err)
		}
	}
	if len(results) != names*(procs+goroutines) {
		t.Errorf("got %d results; want %d", len(results), names*(procs+goroutines))
	}
}

func TestTeamDelete(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "doomed")
	ftNewTeam(t, s, "keeper")
	for _, list := range []string{"doomed", "keeper"} {
		if _, _, err := s.Tasks().Create(ctx, list, tasklist.Task{Subject: "work"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := team.AddMember(ctx, s.Teams(), "doomed", team.Member{Name: "helper"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	// A refusing check aborts the delete and its error comes back as is.
	var ae *team.ActiveError
	if err := team.Delete(ctx, s.Teams(), "doomed"); !errors.As(err, &ae) {
		t.Fatalf("team.Delete with an active member = %v; want *ActiveError", err)
	}
	if _, err := s.Teams().Get(ctx, "doomed"); err != nil {
		t.Fatalf("Get after a refused delete = %v", err)
	}
	if err := team.SetActive(ctx, s.Teams(), "doomed", "helper", false); err != nil {
		t.Fatal(err)
	}
	if err := team.Delete(ctx, s.Teams(), "doomed"); err != nil {
		t.Fatalf("team.Delete = %v", err)
	}

	for _, p := range []string{"teams/doomed", "tasks/doomed"} {
		if _, err := os.Stat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Delete: %v; want it gone", p, err)
		}
	}
	for _, d := range []string{"teams", "tasks"} {
		des, _ := os.ReadDir(filepath.Join(root, d))
		for _, de := range des {
			if strings.Contains(de.Name(), ".deleted-") {
				t.Errorf("%s/%s left behind", d, de.Name())
			}
		}
	}
	if _, err := s.Teams().Get(ctx, "doomed"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Get after Delete = %v; want ErrNotFound", err)
	}
	if err := s.Teams().Delete(ctx, "doomed", nil); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("Delete again = %v; want ErrNotFound", err)
	}
	if entries, err := s.Tasks().List(ctx, "keeper"); err != nil || len(entries) != 1 {
		t.Errorf("other team's tasks after Delete = %d, %v; want 1 task", len(entries), err)
	}
	// The name is free again.
	ftNewTeam(t, s, "doomed")
	if entries, err := s.Tasks().List(ctx, "doomed"); err != nil || len(entries) != 0 {
		t.Errorf("recreated team's tasks = %d, %v; want none", len(entries), err)
	}
}

// TestTeamUpdateForeignWrite rewrites the team file in place from inside
// fn, as a writer that ignores the lock would: Update must notice that the
// file changed since it read it, and apply fn again to the new content
// rather than overwrite it.
func TestTeamUpdateForeignWrite(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "alpha")
	path := filepath.Join(root, "teams", "alpha", "config.json")
	calls := 0
	c, err := s.Teams().Update(ctx, "alpha", func(c *team.Config) error {
		calls++
		if calls == 1 {
			foreign := c.Clone()
			foreign.Description = "written by someone else"
			data, _ := json.Marshal(foreign)
			if err := os.WriteFile(path, data, 0o644); err != nil { // in place
				t.Fatal(err)
			}
		}
		c.LeadSessionID = "ours"
		return nil
	})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	if calls != 2 {
		t.Errorf("fn ran %d times; want 2 (again after the foreign write)", calls)
	}
	got, err := s.Teams().Get(ctx, "alpha")
	if err != nil || got.Description != "written by someone else" || got.LeadSessionID != "ours" || c.Description != got.Description {
		t.Errorf("after Update: description %q, session %q (%v); want both writes kept", got.Description, got.LeadSessionID, err)
	}
}

// TestTeamUpdateLockStolen replaces the lock folder while Update holds it,
// as a process that judged the lock stale would: Update must not commit.
func TestTeamUpdateLockStolen(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	ftNewTeam(t, s, "alpha")
	path := filepath.Join(root, "teams", "alpha", "config.json")
	before, _ := os.ReadFile(path)
	_, err := s.Teams().Update(ctx, "alpha", func(c *team.Config) error {
		if err := os.Remove(path + ".lock"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(path+".lock", 0o755); err != nil { // the new holder's
			t.Fatal(err)
		}
		c.Description = "lost update"
		return nil
	})
	if !errors.Is(err, lockfile.ErrCompromised) {
		t.Errorf("Update with a stolen lock = %v; want ErrCompromised", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("Update committed under a stolen lock:\n%s", after)
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Errorf("the new holder's lock folder: %v; want it left alone", err)
	}
}

// TestTeamTornReadsInPlaceWriter rewrites the team file in place under the
// team lock, as Claude Code does on every roster change, while readers Get
// and List: every read must return the team.
func TestTeamTornReadsInPlaceWriter(t *testing.T) {
	root := t.TempDir()
	s := ftOpen(t, root, file.Options{})
	ctx := t.Context()
	path := ftWriteTeamFile(t, root, "session-fe1abf51", ftClaudeTeamFile)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(stop)
		data := []byte(ftClaudeTeamFile)
		for range 100 {
			lk, err := lockfile.Acquire(ctx, path+".lock", lockfile.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err == nil {
				f.Write(data[:len(data)/2])
				f.Write(data[len(data)/2:])
				f.Close()
			}
			lk.Release()
			time.Sleep(time.Millisecond) // a busy lead, not a spinning one
		}
	})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c, err := s.Teams().Get(ctx, "session-fe1abf51"); err != nil || len(c.Members) != 2 {
					t.Errorf("Get during in-place rewrites = %v", err)
				}
				if cs, err := s.Teams().List(ctx); err != nil || len(cs) != 1 {
					t.Errorf("List during in-place rewrites = %d teams, %v; want 1", len(cs), err)
				}
			}
		})
	}
	wg.Wait()
}

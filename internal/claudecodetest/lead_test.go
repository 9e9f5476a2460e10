package claudecodetest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/troupe-dev/troupe/internal/claudecodetest"
	"github.com/troupe-dev/troupe/llm/llmtest"
	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
)

const (
	spawnPrompt  = "SPAWN-THE-HELPER"
	helperPrompt = "PLEASE-GREET: reply with one word."
)

// spawnHandler scripts a lead that answers spawnPrompt with one Agent call
// that names a teammate "helper", and everything else with text. Every
// request's last user turn goes to log.
func spawnHandler(log *claudecodetest.Turns) llmtest.AnthropicHandler {
	var mu sync.Mutex
	spawned := false
	text := log.Handler("LEAD-DONE")
	return func(req *llmtest.AnthropicRequest) llmtest.AnthropicReply {
		var prompt, result bool
		for _, m := range req.Messages {
			for _, b := range m.Content {
				prompt = prompt || (m.Role == "user" && strings.Contains(b.Text, spawnPrompt))
				result = result || b.Type == "tool_result"
			}
		}
		// Only the main loop's request offers the Agent tool; a side
		// request (a title, a summary) must not take the spawn.
		agentTool := slices.ContainsFunc(req.Tools, func(tl llmtest.AnthropicTool) bool { return tl.Name == "Agent" })
		mu.Lock()
		defer mu.Unlock()
		if prompt && !result && agentTool && !spawned {
			spawned = true
			in, _ := json.Marshal(map[string]string{"description": "greeter", "prompt": helperPrompt, "name": "helper"})
			return llmtest.AnthropicToolCall("toolu_spawn_helper", "Agent", string(in))
		}
		return text(req)
	}
}

// recorderShim writes a program that records its argv (one per line), its
// environment and its working directory into out, then waits to be killed.
func recorderShim(t *testing.T, out string) string {
	t.Helper()
	shim := filepath.Join(t.TempDir(), "teammate-recorder")
	script := `#!/bin/sh
env > "$OUT/env"
pwd > "$OUT/pwd"
printf '%s\n' "$@" > "$OUT/argv.tmp" && mv "$OUT/argv.tmp" "$OUT/argv"
exec sleep 600
`
	if err := os.WriteFile(shim, []byte(strings.ReplaceAll(script, "$OUT", out)), 0o755); err != nil {
		t.Fatal(err)
	}
	return shim
}

// waitFile waits for path to exist and returns its content.
func waitFile(ctx context.Context, path string) ([]byte, error) {
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			return b, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestRealLeadLaunchesTeammateCommand replays docs/protocol.md section 16: a
// real Claude Code lead in tmux, told by the fake model to spawn a named
// teammate, runs CLAUDE_CODE_TEAMMATE_COMMAND in a new pane with the flags
// of section 10.2 and writes the prompt, signed, into its inbox first.
// Then messages troupe's file store writes as that teammate reach the
// lead's model (section 7).
func TestRealLeadLaunchesTeammateCommand(t *testing.T) {
	log := claudecodetest.NewTurns()
	srv := llmtest.NewAnthropicServer(t, spawnHandler(log))
	s := claudecodetest.New(t, srv.URL)
	out := t.TempDir()
	s.Env = append(s.Env, "CLAUDE_CODE_TEAMMATE_COMMAND="+recorderShim(t, out))
	work := t.TempDir()
	x := s.StartTmux(t, work, "--teammate-mode", "tmux", "--permission-mode", "acceptEdits", spawnPrompt)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rawArgv, err := waitFile(ctx, filepath.Join(out, "argv"))
	if err != nil {
		t.Fatalf("the teammate command never ran: %v\nlead screen:\n%s", err, x.Screen(context.Background()))
	}
	argv := strings.Split(strings.TrimSuffix(string(rawArgv), "\n"), "\n")
	flags := map[string]string{}
	for i := 0; i < len(argv); i++ {
		if !strings.HasPrefix(argv[i], "--") || i+1 == len(argv) || strings.HasPrefix(argv[i+1], "--") {
			t.Fatalf("argv %q: %q is not a --flag value pair (no prompt argument expected)", argv, argv[i])
		}
		flags[argv[i]] = argv[i+1]
		i++
	}
	team := flags["--team-name"]
	sid := flags["--parent-session-id"]
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f-]{27}$`).MatchString(sid) || team != "session-"+sid[:8] {
		t.Errorf("--parent-session-id %q, --team-name %q; want a UUID and session-<its first 8 hex>", sid, team)
	}
	want := map[string]string{"--agent-id": "helper@" + team, "--agent-name": "helper", "--agent-color": "blue", "--permission-mode": "acceptEdits"}
	for k, v := range want {
		if flags[k] != v {
			t.Errorf("%s = %q; want %q (argv %q)", k, flags[k], v, argv)
		}
	}
	wantOrder := []string{"--agent-id", "--agent-name", "--team-name", "--agent-color", "--parent-session-id", "--lead-verify-key", "--permission-mode", "--model"}
	var order []string
	for i := 0; i < len(argv); i += 2 {
		order = append(order, argv[i])
	}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("flags %q; want %q", order, wantOrder)
	}
	if flags["--model"] != srv.LastRequest().Model {
		t.Errorf("--model %q; want the lead's model %q", flags["--model"], srv.LastRequest().Model)
	}
	key, err := mailbox.ParseLeadVerifyKey(flags["--lead-verify-key"])
	if err != nil {
		t.Fatal(err)
	}

	pwd, _ := os.ReadFile(filepath.Join(out, "pwd"))
	if strings.TrimSpace(string(pwd)) != work {
		t.Errorf("teammate cwd %q; want the lead's %q", pwd, work)
	}
	env, _ := os.ReadFile(filepath.Join(out, "env"))
	for _, kv := range []string{"CLAUDECODE=1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1", "ANTHROPIC_BASE_URL=" + srv.URL, "CLAUDE_CONFIG_DIR=" + s.ConfigDir} {
		if !slices.Contains(strings.Split(string(env), "\n"), kv) {
			t.Errorf("teammate environment lacks %s", kv)
		}
	}

	// The prompt was in the inbox before the program started, signed.
	b, err := os.ReadFile(filepath.Join(s.TeamsDir(), team, "inboxes", "helper.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inbox []mailbox.Message
	if err := json.Unmarshal(b, &inbox); err != nil {
		t.Fatalf("inbox: %v\n%s", err, b)
	}
	if len(inbox) != 1 || inbox[0].From != "team-lead" || inbox[0].Text != helperPrompt || inbox[0].Read {
		t.Fatalf("inbox = %s; want one unread entry from team-lead with the Agent prompt", b)
	}
	if err := key.Verify(inbox[0]); err != nil {
		t.Errorf("lead_sig of the first entry: %v\n%s", err, b)
	}
	if !key.Created.Before(inbox[0].Timestamp.Add(time.Second)) {
		t.Errorf("key made at %v, after the entry it signed (%v)", key.Created, inbox[0].Timestamp)
	}

	// The team file lists the teammate as a tmux member.
	cfg, err := os.ReadFile(filepath.Join(s.TeamsDir(), team, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Members []struct {
			AgentID, Name, TmuxPaneID, BackendType, Color string
		} `json:"members"`
	}
	if err := json.Unmarshal(cfg, &tf); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tf.Members, func(m struct{ AgentID, Name, TmuxPaneID, BackendType, Color string }) bool {
		return m.Name == "helper"
	})
	if i < 0 || tf.Members[i].BackendType != "tmux" || !strings.HasPrefix(tf.Members[i].TmuxPaneID, "%") || tf.Members[i].AgentID != "helper@"+team {
		t.Errorf("team file members: %s; want helper as a tmux member with a pane id", cfg)
	}

	// What troupe writes as the teammate reaches the lead's model.
	st, err := file.Open(s.ConfigDir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reply := mailbox.Message{From: "helper", Color: "blue", Summary: "greeting done", Text: "HELLO-LEAD-FROM-TROUPE"}
	if _, err := st.Mail().Send(ctx, team, "team-lead", reply); err != nil {
		t.Fatal(err)
	}
	turn, err := log.Wait(ctx, "HELLO-LEAD-FROM-TROUPE")
	if err != nil {
		t.Fatalf("%v\nlead screen:\n%s", err, x.Screen(context.Background()))
	}
	if want := `<teammate-message teammate_id="helper" color="blue" summary="greeting done">` + "\nHELLO-LEAD-FROM-TROUPE\n</teammate-message>"; !strings.Contains(turn, want) {
		t.Errorf("lead turn:\n%s\nwant it to hold\n%s", turn, want)
	}
	idle, err := mailbox.Encode(mailbox.IdleNotification{From: "helper", Timestamp: time.Now().UTC().Format(mailbox.TimeLayout), IdleReason: mailbox.IdleAvailable, Result: "IDLE-RESULT-FROM-TROUPE"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Mail().Send(ctx, team, "team-lead", mailbox.Message{From: "helper", Color: "blue", Text: idle}); err != nil {
		t.Fatal(err)
	}
	if turn, err = log.Wait(ctx, "IDLE-RESULT-FROM-TROUPE"); err != nil {
		t.Fatalf("%v\nlead screen:\n%s", err, x.Screen(context.Background()))
	}
	// A frame is passed through as its JSON, and the lead's copy is
	// wrapped as a message from another session.
	if want := `<teammate-message teammate_id="helper" color="blue">` + "\n" + idle + "\n</teammate-message>"; !strings.Contains(turn, want) || !strings.HasPrefix(turn, "Another Claude session sent a message:") {
		t.Errorf("lead turn:\n%s\nwant the peer-message wrapper around\n%s", turn, want)
	}
}

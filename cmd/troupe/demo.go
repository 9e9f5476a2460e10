package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/swarm"
	"github.com/troupe-dev/troupe/team"
)

// demoFiles are the demo's scripted model and its small Go project.
//
//go:embed demo/script.json demo/project
var demoFiles embed.FS

// demoPrompt is what the demo's lead is asked.
const demoPrompt = "Add a Sub function to the calc package, with a test and documentation. Work as a team."

// demoCommand is `troupe demo`: an offline agent team on a scripted model.
func (a *app) demoCommand() *cobra.Command {
	var mode string
	var keep, slow, ui bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run an offline agent team: a lead and three teammates add a function to a small Go project",
		Long: `troupe demo runs a whole agent team offline, on a scripted model (no API key,
no network): in a fresh temporary git repository holding a small Go project, a
lead creates a team, three tasks with a dependency and three teammates; the
teammates claim the tasks, edit the files, run go build and go test (asking the
lead for permission, which the demo grants), message each other and the lead,
then shut down, and the lead deletes the team. It prints a timestamped timeline
and a summary, checks the result, and leaves no process or pane behind.`,
		Args: positional(),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch mode {
			case backend.ModeInProcess, backend.ModeTmux, backend.ModeITerm2, backend.ModeAuto:
			default:
				return usagef("--teammate-mode %q: want in-process, tmux, iterm2 or auto", mode)
			}
			if ui && (!isTerminal(a.Stdin) || !isTerminal(a.Stdout)) {
				return usagef("--ui needs a terminal (stdin and stdout); without --ui the demo prints its timeline")
			}
			return a.runDemo(cmd.Context(), mode, keep, slow || ui, ui)
		},
	}
	cmd.Flags().StringVar(&mode, "teammate-mode", backend.ModeInProcess, "where the teammates run: in-process, tmux (panes of a private tmux server, or of this window inside tmux), iterm2 or auto")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary project and store (their folder is printed)")
	cmd.Flags().BoolVar(&ui, "ui", false, "run the demo in the interactive lead, at --slow speed: watch the team work, look into teammates and tasks (no key needed; Ctrl+C twice leaves)")
	cmd.Flags().BoolVar(&slow, "slow", false, fmt.Sprintf("every model reply takes %s, so that a person can follow the team (with --teammate-mode tmux, attach with the command printed at the start)", slowReply))
	return cmd
}

// demoStats counts what happened, for the summary.
type demoStats struct {
	mu     sync.Mutex
	counts map[string]int
	tools  map[string]int
	done   map[string]bool // tasks reported completed
}

func (s *demoStats) add(e swarm.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[e.Kind]++
	switch {
	case e.Kind == swarm.EventPermission && strings.Contains(e.Text, " asks to run "):
		s.counts["asks"]++
	case e.Kind == swarm.EventExit && strings.Contains(e.Text, "has shut down"):
		s.counts["shutdowns"]++
	case e.Kind == swarm.EventIdle && e.Agent != "" && strings.HasPrefix(e.Text, e.Agent+" is idle"):
		s.counts["idle-sent"]++ // as the lead read it
		if _, id, ok := strings.Cut(e.Text, "completed task #"); ok {
			s.done[strings.Fields(id)[0]] = true
		}
	}
	if e.Kind == "tool" && e.Agent == team.LeadName { // the lead's: the same in every backend
		s.tools[strings.Fields(e.Text)[0]]++
	}
}

func (a *app) runDemo(ctx context.Context, mode string, keep, slow, ui bool) error {
	start := a.Now()
	dir, err := os.MkdirTemp("", "troupe-demo-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(a.Stdout, "demo folder: %s (kept)\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	project, home := filepath.Join(dir, "calc"), filepath.Join(dir, "home")
	script := filepath.Join(dir, "script.json")
	if err := writeDemo(project, script, slow); err != nil {
		return err
	}
	out := a.Stdout
	fmt.Fprintf(out, "troupe demo: a lead and three teammates on a scripted model, teammates %s\nproject: %s\n\n", mode, project)
	if err := gitInit(ctx, project); err != nil {
		fmt.Fprintf(out, "(no git repository: %v)\n", err)
	}
	stats := &demoStats{counts: map[string]int{}, tools: map[string]int{}, done: map[string]bool{}}
	granted := 0
	var answerMu sync.Mutex
	answer := func(ctx context.Context, q swarm.PermissionAsk) (swarm.PermissionAnswer, error) {
		answerMu.Lock()
		defer answerMu.Unlock()
		granted++
		var cmd string
		if in := string(q.Input); strings.Contains(in, "go test") {
			cmd = "go test"
		}
		if cmd == "go test" {
			// Tests may run again at any time: allow them for the whole team.
			return swarm.PermissionAnswer{Allow: true, Always: true, Rule: "Bash(go test:*)"}, nil
		}
		return swarm.PermissionAnswer{Allow: true}, nil
	}
	a.homeFlag = home
	mate := &teammateFlags{teammateMode: mode}
	h := &headless{print: true, outputFormat: "text", provider: "scripted", script: script, maxTurns: 50, cwd: project,
		permissionMode: "acceptEdits", promptTimeout: time.Minute,
		teams: teamFlags{enabled: true, digest: digestQuiet, mate: mate, answer: answer, timeline: out, onEvent: stats.add}}
	var result bytes.Buffer
	var runErr error
	if ui {
		h.print, h.noResumeHint = false, true
		runErr = a.runInteractivePrompt(ctx, h, demoPrompt)
		result.WriteString("(shown in the interactive lead)")
	} else {
		saved := a.Stdout
		a.Stdout = &result // the lead's final answer, printed in the summary
		runErr = a.runHeadless(ctx, h, demoPrompt)
		a.Stdout = saved
	}
	elapsed := a.Now().Sub(start)
	if ctx.Err() != nil {
		// The run stopped its teammates and removed the team on its way
		// out; the folder goes with the deferred removal.
		fmt.Fprintf(out, "\ninterrupted after %s: the teammates were stopped and the team removed\n", elapsed.Round(10*time.Millisecond))
		return &ExitError{Code: 130}
	}

	stats.mu.Lock()
	deleted := stats.counts[swarm.EventDeleted] > 0
	stats.mu.Unlock()
	if ui && !deleted && runErr == nil {
		fmt.Fprintf(out, "\nyou left the demo after %s, before the team finished; its teammates were stopped and the team removed\n", elapsed.Round(10*time.Millisecond))
		return nil
	}
	problems := a.checkDemo(ctx, project, deleted)
	if runErr != nil {
		problems = append([]string{"the lead's run failed: " + runErr.Error()}, problems...)
	}
	return stats.summary(out, elapsed, mode, granted, strings.TrimSpace(result.String()), problems)
}

// summary prints the demo's figures and its verdict.
func (stats *demoStats) summary(out io.Writer, elapsed time.Duration, mode string, granted int, answer string, problems []string) error {
	fmt.Fprintf(out, "\nsummary (%s):\n", elapsed.Round(10*time.Millisecond))
	stats.mu.Lock()
	fmt.Fprintf(out, "  teammates spawned      %d (%s)\n", stats.counts[swarm.EventSpawned], mode)
	fmt.Fprintf(out, "  tasks completed        %d\n", len(stats.done))
	fmt.Fprintf(out, "  lead's tool calls      %s\n", toolCounts(stats.tools))
	fmt.Fprintf(out, "  messages to the lead   %d\n", stats.counts[swarm.EventMessage])
	fmt.Fprintf(out, "  permission requests    %d (granted by the lead %d)\n", stats.counts["asks"], granted)
	fmt.Fprintf(out, "  idle notifications     %d, reaching the lead as %d digest message(s)\n", stats.counts["idle-sent"], stats.counts[swarm.EventDigest])
	fmt.Fprintf(out, "  shutdowns              %d\n", stats.counts["shutdowns"])
	fmt.Fprintf(out, "  deaths                 %d\n", stats.counts[swarm.EventDead])
	stats.mu.Unlock()
	fmt.Fprintf(out, "  lead's answer          %s\n", answer)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(out, "  FAILED: %s\n", p)
		}
		return fmt.Errorf("demo failed: %s", strings.Join(problems, "; "))
	}
	fmt.Fprintf(out, "  result                 ok: calc has Sub, its test passes, README lists it, the team is deleted\n")
	return nil
}

// slowReply is how long each model reply takes in demo --slow.
const slowReply = 1500 * time.Millisecond

// writeDemo writes the project and the script; with slow, every reply
// that has no delay of its own waits slowReply.
func writeDemo(project, script string, slow bool) error {
	if err := os.MkdirAll(project, 0o755); err != nil {
		return err
	}
	ents, err := demoFiles.ReadDir("demo/project")
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := demoFiles.ReadFile("demo/project/" + e.Name())
		if err != nil {
			return err
		}
		// Stored as .txt so that the repository's tools do not take the
		// fixture for a package of ours.
		if err := os.WriteFile(filepath.Join(project, strings.TrimSuffix(e.Name(), ".txt")), b, 0o644); err != nil {
			return err
		}
	}
	b, err := demoFiles.ReadFile("demo/script.json")
	if err != nil {
		return err
	}
	if slow {
		if b, err = slowScript(b); err != nil {
			return err
		}
	}
	return os.WriteFile(script, b, 0o644)
}

// slowScript sets delay_ms on every turn of a scripted model's script
// that has none.
func slowScript(b []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("demo script: %w", err)
	}
	turns, _ := doc["turns"].([]any)
	for _, t := range turns {
		if reply, ok := t.(map[string]any)["reply"].(map[string]any); ok {
			if _, set := reply["delay_ms"]; !set {
				reply["delay_ms"] = slowReply.Milliseconds()
			}
		}
	}
	return json.MarshalIndent(doc, "", " ")
}

// gitInit makes the project a git repository with one commit.
func gitInit(ctx context.Context, dir string) error {
	for _, args := range [][]string{{"init", "-q"}, {"add", "."},
		{"-c", "user.name=troupe demo", "-c", "user.email=demo@troupe.invalid", "commit", "-q", "-m", "calc: Add"}} {
		c := exec.CommandContext(ctx, "git", args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, bytes.TrimSpace(out))
		}
	}
	return nil
}

// checkDemo verifies the outcome: the files changed as planned, the tests
// pass, and the lead deleted the team (TeamDelete: deleted says it did; the
// removal at the end of the run would hide a lead that did not).
func (a *app) checkDemo(ctx context.Context, project string, deleted bool) []string {
	var problems []string
	if !deleted {
		problems = append(problems, "the lead did not delete its team with TeamDelete")
	}
	for file, want := range map[string]string{"calc.go": "func Sub(a, b int) int", "calc_test.go": "func TestSub", "README.md": "`Sub(a, b)`"} {
		b, err := os.ReadFile(filepath.Join(project, file))
		if err != nil || !bytes.Contains(b, []byte(want)) {
			problems = append(problems, fmt.Sprintf("%s does not contain %q", file, want))
		}
	}
	c := exec.CommandContext(ctx, "go", "test", "./...")
	c.Dir = project
	if out, err := c.CombinedOutput(); err != nil {
		problems = append(problems, fmt.Sprintf("go test in the project failed: %v: %s", err, bytes.TrimSpace(out)))
	}
	sess, err := a.open()
	if err != nil {
		return append(problems, err.Error())
	}
	defer sess.close()
	teams, err := sess.Teams.List(ctx)
	if err != nil {
		problems = append(problems, "list teams: "+err.Error())
	}
	for _, t := range teams {
		problems = append(problems, fmt.Sprintf("team %q was not deleted (members: %s)", t.Name, strings.Join(t.Names(), ", ")))
	}
	return problems
}

func toolCounts(m map[string]int) string {
	if len(m) == 0 {
		return "(in the panes)"
	}
	names := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}

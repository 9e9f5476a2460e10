// Package demo is troupe demo's offline agent team: the small Go project
// and the scripted model it runs on, the lead's permission answers, the
// figures it counts from the team's events, and the check of the result.
// The command that runs the lead on them lives in cmd/troupe.
//
// Stats and Approver are safe for concurrent use: the team's events and
// permission requests arrive from several goroutines.
package demo

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/gitenv"
)

// files are the demo's scripted model and its small Go project.
//
//go:embed script.json project
var files embed.FS

// Prompt is what the demo's lead is asked.
const Prompt = "Add a Sub function to the calc package, with a test and documentation. Work as a team."

// SlowReply is how long each model reply takes in troupe demo --slow.
const SlowReply = 1500 * time.Millisecond

// Write writes the project into the folder project and the scripted
// model's script to the file script; with slow, every reply that has no
// delay of its own waits SlowReply.
func Write(project, script string, slow bool) error {
	if err := os.MkdirAll(project, 0o755); err != nil {
		return err
	}
	ents, err := files.ReadDir("project")
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := files.ReadFile("project/" + e.Name())
		if err != nil {
			return err
		}
		// Stored as .txt so that the repository's tools do not take the
		// fixture for a package of ours.
		if err := os.WriteFile(filepath.Join(project, strings.TrimSuffix(e.Name(), ".txt")), b, 0o644); err != nil {
			return err
		}
	}
	b, err := files.ReadFile("script.json")
	if err != nil {
		return err
	}
	if slow {
		if b, err = slowScript(b, SlowReply); err != nil {
			return err
		}
	}
	return os.WriteFile(script, b, 0o644)
}

// slowScript sets delay_ms to d on every turn of a scripted model's
// script that has none.
func slowScript(b []byte, d time.Duration) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("demo script: %w", err)
	}
	turns, _ := doc["turns"].([]any)
	for _, t := range turns {
		turn, _ := t.(map[string]any)
		if reply, ok := turn["reply"].(map[string]any); ok {
			if _, set := reply["delay_ms"]; !set {
				reply["delay_ms"] = d.Milliseconds()
			}
		}
	}
	return json.MarshalIndent(doc, "", " ")
}

// GitInit makes the project in dir a git repository with one commit.
func GitInit(ctx context.Context, dir string) error {
	for _, args := range [][]string{{"init", "-q"}, {"add", "."},
		{"-c", "user.name=troupe demo", "-c", "user.email=demo@troupe.invalid", "commit", "-q", "-m", "calc: Add"}} {
		c := exec.CommandContext(ctx, "git", args...)
		c.Dir, c.Env = dir, gitenv.Env(nil) // the user's global hooks do not run for the demo
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, bytes.TrimSpace(out))
		}
	}
	return nil
}

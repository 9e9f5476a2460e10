package worktree

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/internal/gitenv"
)

// State is what an agent is told of the repository it works in.
type State struct {
	Repo   bool     // dir is in a git repository
	Branch string   // "" when HEAD is detached
	Status []string // git status --short lines
}

// ReadState reads the git state of dir without running anything a
// repository's configuration could add: no fsmonitor hook, no optional
// locks, a short deadline. Outside a repository, or without git, it is
// the zero State and no error.
func ReadState(ctx context.Context, dir string) (State, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "--no-optional-locks",
		"-C", dir, "status", "--short", "--branch", "--untracked-files=normal")
	c.Env = gitenv.Env(nil) // no hooks, no bare repository found by looking
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		if strings.Contains(errOut.String(), "not a git repository") {
			return State{}, nil
		}
		if _, lookErr := exec.LookPath("git"); lookErr != nil {
			return State{}, nil // no git: say nothing about it
		}
		return State{}, err
	}
	return parseState(out.String()), nil
}

// parseState reads the output of git status --short --branch.
func parseState(out string) State {
	st := State{Repo: true}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		head := strings.TrimPrefix(lines[0], "## ")
		head = strings.TrimPrefix(head, "No commits yet on ")
		head, _, _ = strings.Cut(head, "...")
		head, _, _ = strings.Cut(head, " ")
		if !strings.HasPrefix(head, "HEAD") {
			st.Branch = head
		}
		lines = lines[1:]
	}
	for _, l := range lines {
		if l != "" {
			st.Status = append(st.Status, l)
		}
	}
	return st
}

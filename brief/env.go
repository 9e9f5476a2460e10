package brief

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// MaxStatusLines is how many lines of git status the environment shows.
const MaxStatusLines = 40

// Git is the state of a git working tree.
type Git struct {
	Repo   bool
	Branch string   // "" when detached or unknown
	Status []string // git status --short lines
}

// Environment is what an agent is told about where it works, refreshed
// at each run.
type Environment struct {
	Cwd   string
	Model string
	Now   time.Time
	// Git reads the git state of a folder; nil leaves it out.
	Git func(ctx context.Context, dir string) (Git, error)
	// Getenv reads the environment (SHELL); nil means os.Getenv.
	Getenv func(string) string
}

// Render returns the environment block.
func (e Environment) Render(ctx context.Context) string {
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var b strings.Builder
	b.WriteString("<env>\n")
	fmt.Fprintf(&b, "Working folder: %s\n", e.Cwd)
	fmt.Fprintf(&b, "Platform: %s\n", platform())
	if sh := getenv("SHELL"); sh != "" {
		fmt.Fprintf(&b, "Shell: %s\n", sh)
	}
	now := e.Now
	if now.IsZero() {
		now = time.Now()
	}
	fmt.Fprintf(&b, "Today's date: %s\n", now.Format("2006-01-02 (Monday)"))
	if e.Model != "" {
		fmt.Fprintf(&b, "Model: %s\n", e.Model)
	}
	if e.Git != nil {
		g, err := e.Git(ctx, e.Cwd)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "Git: unknown (%v)\n", err)
		case !g.Repo:
			b.WriteString("Git repository: no\n")
		default:
			branch := g.Branch
			if branch == "" {
				branch = "(detached HEAD)"
			}
			fmt.Fprintf(&b, "Git repository: yes, on branch %s\n", branch)
			if len(g.Status) == 0 {
				b.WriteString("Git status: clean\n")
			} else {
				b.WriteString("Git status (git status --short, at the start of this run):\n")
				for _, l := range g.Status[:min(len(g.Status), MaxStatusLines)] {
					b.WriteString(l + "\n")
				}
				if n := len(g.Status) - MaxStatusLines; n > 0 {
					fmt.Fprintf(&b, "... and %d more\n", n)
				}
			}
		}
	}
	b.WriteString("</env>")
	return b.String()
}

// platform names the operating system, its version where known, and the
// architecture.
func platform() string {
	p := runtime.GOOS + "/" + runtime.GOARCH
	if runtime.GOOS == "linux" {
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			p += ", kernel " + strings.TrimSpace(string(b))
		}
		if b, err := os.ReadFile("/etc/os-release"); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
					p += ", " + strings.Trim(v, `"`)
				}
			}
		}
	}
	return p
}

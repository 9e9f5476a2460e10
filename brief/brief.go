// Package brief writes what an agent is told before its first message:
// the system prompt of its role (lead, teammate, sub-agent, remote job)
// from embedded Markdown, the project instructions users keep in
// CLAUDE.md and AGENTS.md files, and the environment it works in.
//
// A system prompt comes in two parts. Stable is the same from one turn
// and one run to the next (the role, how to work, the project
// instructions) and is cached by providers that cache prompts; Volatile
// (the environment: date, git state) comes after the cache breakpoint, so
// that a new day or a new commit does not invalidate the cached prefix.
//
// The package reads files (instructions) but runs no program: the git
// state comes from a function the caller gives (Environment.Git).
package brief

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

// Roles.
const (
	RoleLead     = "lead"
	RoleTeammate = "teammate"
	RoleSubAgent = "subagent"
	RoleRemote   = "remote"
	RoleExplore  = "explore" // the Explore built-in agent
	RolePlan     = "plan"    // the Plan built-in agent
)

//go:embed roles/*.md
var roles embed.FS

// MaxStableBytes is the size budget of a role prompt with the working
// rules, before project instructions: a test keeps every role within it.
const MaxStableBytes = 8 << 10

// Vars fill in a role's template.
type Vars struct {
	Cwd     string // the working folder
	Name    string // teammate: its name
	Team    string // teammate: its team
	Type    string // sub-agent: its agent type
	Planned bool   // teammate: starts in plan mode
	Teams   bool   // lead: agent teams are on
	// ExplicitTeams: the lead has TeamCreate and TeamDelete (setting
	// teams.explicit); else a named Agent call spawns into the
	// session's own team.
	ExplicitTeams bool
}

// Role returns the prompt of role with vars filled in, followed by the
// shared working rules (how to work, what to ask first, how to report).
func Role(role string, vars Vars) (string, error) {
	src, err := roles.ReadFile("roles/" + role + ".md")
	if err != nil {
		return "", fmt.Errorf("brief: no role %q", role)
	}
	t, err := template.New(role).Parse(string(src))
	if err != nil {
		return "", fmt.Errorf("brief: role %s: %w", role, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, vars); err != nil {
		return "", fmt.Errorf("brief: role %s: %w", role, err)
	}
	working, err := roles.ReadFile("roles/working.md")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()) + "\n\n" + strings.TrimSpace(string(working)), nil
}

// System is a system prompt in its two parts.
type System struct {
	Stable   string // cached: role, working rules, project instructions
	Volatile string // after the cache breakpoint: the environment
}

// Build joins a role prompt (or a custom one), the project instructions
// and the environment into a System.
func Build(rolePrompt string, instr *Instructions, env string) System {
	s := System{Stable: rolePrompt, Volatile: env}
	if text := instr.Render(); text != "" {
		s.Stable += "\n\n" + text
	}
	return s
}

package brief

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/troupe-dev/troupe/internal/frontmatter"
)

func TestLoadAgentsPrecedenceAndErrors(t *testing.T) {
	root := t.TempDir()
	proj, home, troupeHome := filepath.Join(root, "proj"), filepath.Join(root, "home"), filepath.Join(root, "home", ".troupe")
	write(t, filepath.Join(proj, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews code (project)\ntools: Read, Grep\nmodel: haiku\ncolor: blue\n---\nYou review code.\n")
	write(t, filepath.Join(proj, ".troupe", "agents", "tester.md"), "---\nname: tester\ndescription: Runs tests\ndisallowedTools:\n  - Write\n  - Edit\npermissionMode: acceptEdits\nmodel: inherit\nmaxBudgetUsd: 0.25\n---\nYou run tests.\n")
	write(t, filepath.Join(home, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews code (user)\n---\nUser reviewer.\n")
	write(t, filepath.Join(troupeHome, "agents", "writer.md"), "---\nname: writer\ndescription: Writes docs\ntools: [Read, Write]\n---\nYou write docs.\n")
	write(t, filepath.Join(troupeHome, "agents", "Explore.md"), "---\nname: Explore\ndescription: my own explorer\n---\nExplore my way.\n")
	// Malformed files: each is reported with its file and line, the others load.
	bad := filepath.Join(proj, ".claude", "agents", "broken.md")
	write(t, bad, "---\nname: broken\ndescription: x\n  nested: value\n---\nbody\n")
	noDesc := filepath.Join(proj, ".claude", "agents", "nodesc.md")
	write(t, noDesc, "---\nname: nodesc\n---\nbody\n")
	badMode := filepath.Join(proj, ".claude", "agents", "badmode.md")
	write(t, badMode, "---\nname: badmode\ndescription: d\n\npermissionMode: yolo\n---\nbody\n")
	badBudget := filepath.Join(proj, ".claude", "agents", "badbudget.md")
	write(t, badBudget, "---\nname: badbudget\ndescription: d\nmaxBudgetUsd: lots\n---\nbody\n")
	write(t, filepath.Join(proj, ".claude", "agents", "notes.txt"), "not an agent")

	agents, err := LoadAgents(AgentDirs(proj, home, troupeHome))
	if err == nil {
		t.Fatal("LoadAgents: no error for the malformed files")
	}
	for _, want := range []string{bad + ":4: nested values", noDesc + ":1: no description", badMode + ":5: permissionMode \"yolo\"", badBudget + ":4: maxBudgetUsd \"lots\" is not an amount"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("LoadAgents error %q; want it to contain %q", err, want)
		}
	}
	got := map[string]Agent{}
	for _, a := range agents {
		got[a.Name] = a
	}
	if names := AgentNames(agents); !slices.Equal(names, []string{"Explore", "reviewer", "tester", "writer"}) {
		t.Fatalf("loaded %v; want Explore reviewer tester writer", names)
	}
	if r := got["reviewer"]; r.Description != "Reviews code (project)" || r.Source != SourceProject || !slices.Equal(r.Tools, []string{"Read", "Grep"}) || r.Model != "haiku" || r.Color != "blue" || r.Prompt != "You review code." {
		t.Errorf("reviewer = %+v; want the project's file", r)
	}
	if te := got["tester"]; !slices.Equal(te.DisallowedTools, []string{"Write", "Edit"}) || te.Tools != nil || te.Model != "" || te.PermissionMode != "acceptEdits" || te.MaxBudgetUSD != 0.25 {
		t.Errorf("tester = %+v", te)
	}
	if w := got["writer"]; w.Source != SourceUser || !slices.Equal(w.Tools, []string{"Read", "Write"}) {
		t.Errorf("writer = %+v", w)
	}

	all := WithBuiltins(agents)
	if names := AgentNames(all); !slices.Equal(names, []string{"general-purpose", "Plan", "Explore", "reviewer", "tester", "writer"}) {
		t.Errorf("WithBuiltins = %v", names)
	}
	if e, _ := FindAgent(all, "Explore"); e.Builtin() || e.Prompt != "Explore my way." {
		t.Errorf("Explore = %+v; want the user's file to replace the built-in", e)
	}
}

func TestBuiltinAgents(t *testing.T) {
	for _, a := range BuiltinAgents() {
		if !a.Builtin() || a.Description == "" {
			t.Errorf("%s: %+v", a.Name, a)
		}
		text, err := Role(a.Role, Vars{Cwd: "/w", Type: a.Name})
		if err != nil || !strings.Contains(text, "/w") {
			t.Errorf("Role(%s) = %q, %v", a.Role, text, err)
		}
		readOnly := a.Name == AgentExplore || a.Name == AgentPlan
		if readOnly && (a.Tools == nil || slices.Contains(a.Tools, "Write") || slices.Contains(a.Tools, "Edit") || slices.Contains(a.Tools, "Bash")) {
			t.Errorf("%s tools %v; want read-only ones", a.Name, a.Tools)
		}
	}
}

// FuzzAgent: any file either gives a valid definition or an error that
// names the file and a line; it never panics.
func FuzzAgent(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\ntools: Read, Grep\n---\nbody\n",
		"---\nname: a\ndescription: d\ndisallowedTools:\n  - Bash\nmodel: inherit\n---\nbody",
		"---\nname: bad name\ndescription: d\n---\nx",
		"---\nname: a\ndescription: d\npermissionMode: plan\n---\n",
		"no front matter",
		"---\nname: [a, b]\n---\nx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := frontmatter.Parse(src)
		if err != nil {
			return
		}
		a, err := agentFrom("f.md", doc)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.md:") {
				t.Fatalf("agentFrom error %q does not name the file and line", err)
			}
			return
		}
		if !agentName.MatchString(a.Name) || a.Description == "" || a.Prompt == "" {
			t.Fatalf("agentFrom(%q) = %+v: an invalid definition", src, a)
		}
	})
}

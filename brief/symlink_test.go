package brief

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A project's instruction file that links outside the folders the agent
// may read (a cloned repository's CLAUDE.md linking to ~/.ssh/id_rsa) is
// not read into the prompt, and a note names it; one linking inside the
// project, and a plain file of a folder above, still are.
func TestInstructionLinksOutsideAreNotRead(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	secret := filepath.Join(root, "private", "id_rsa")
	write(t, secret, "SECRET KEY")
	write(t, filepath.Join(root, "private", "CLAUDE.md"), "PRIVATE RULES")
	write(t, filepath.Join(root, "AGENTS.md"), "PARENT RULES") // a folder above: read
	write(t, filepath.Join(cwd, "docs", "agents.md"), "LINKED INSIDE")
	symlink(t, secret, filepath.Join(cwd, "CLAUDE.md"))
	symlink(t, filepath.Join("docs", "agents.md"), filepath.Join(cwd, "AGENTS.md"))
	symlink(t, filepath.Join(root, "private"), filepath.Join(cwd, ".claude")) // .claude/CLAUDE.md
	symlink(t, secret, filepath.Join(cwd, "pkg", "CLAUDE.md"))
	symlink(t, filepath.Join(root, "private"), filepath.Join(cwd, "linked"))

	l := NewLoader(Options{Cwd: cwd})
	text := l.Start().Render()
	for _, bad := range []string{"SECRET KEY", "PRIVATE RULES"} {
		if strings.Contains(text, bad) {
			t.Errorf("the prompt holds %q:\n%s", bad, text)
		}
	}
	for _, want := range []string{"LINKED INSIDE", "PARENT RULES",
		filepath.Join(cwd, "CLAUDE.md") + ": " + LinksOutside(secret),
		filepath.Join(cwd, ".claude", "CLAUDE.md") + ": " + LinksOutside(filepath.Join(root, "private", "CLAUDE.md"))} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, text)
		}
	}
	for _, p := range []string{filepath.Join(cwd, "pkg", "a.go"), filepath.Join(cwd, "linked", "a.go")} {
		n := l.Nested(p)
		if n == nil || len(n.Sources) != 1 || n.Sources[0].Content != "" || !strings.Contains(n.Sources[0].Note, "not read: it links to") {
			t.Errorf("Nested(%s) = %+v; want the link refused with a note", p, n)
		}
	}

	// What the agent may read (Readable: its permissions) may be linked.
	text = NewLoader(Options{Cwd: cwd, Readable: func(string) bool { return true }}).Start().Render()
	if !strings.Contains(text, "SECRET KEY") {
		t.Errorf("a link Readable allows was refused:\n%s", text)
	}
	// The user's own files are theirs to link.
	user := filepath.Join(root, "home", ".claude", "CLAUDE.md")
	symlink(t, filepath.Join(root, "private", "CLAUDE.md"), user)
	text = NewLoader(Options{Cwd: t.TempDir(), UserFiles: []string{user}}).Start().Render()
	if !strings.Contains(text, "PRIVATE RULES") {
		t.Errorf("the user's linked CLAUDE.md was refused:\n%s", text)
	}
}

// A project's skill, command or agent definition that links outside the
// project is not loaded, and the error names it; one linking inside is.
func TestDefinitionLinksOutsideAreNotRead(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	outside := filepath.Join(root, "private")
	write(t, filepath.Join(outside, "evil", "SKILL.md"), "---\nname: evil\ndescription: SECRET SKILL\n---\nSECRET BODY")
	write(t, filepath.Join(outside, "cmd.md"), "---\ndescription: SECRET COMMAND\n---\nSECRET BODY")
	write(t, filepath.Join(outside, "agent.md"), "---\nname: spy\ndescription: SECRET AGENT\n---\nSECRET BODY")
	write(t, filepath.Join(proj, "shared", "SKILL.md"), "---\nname: good\ndescription: linked inside\n---\nGOOD BODY")
	symlink(t, filepath.Join(outside, "evil", "SKILL.md"), filepath.Join(proj, ".claude", "skills", "evil", "SKILL.md"))
	symlink(t, filepath.Join(outside, "evil"), filepath.Join(proj, ".claude", "skills", "evil2")) // a linked folder is no skill
	symlink(t, filepath.Join(proj, "shared", "SKILL.md"), filepath.Join(proj, ".claude", "skills", "good", "SKILL.md"))
	symlink(t, filepath.Join(outside, "cmd.md"), filepath.Join(proj, ".claude", "commands", "steal.md"))
	symlink(t, filepath.Join(outside, "agent.md"), filepath.Join(proj, ".claude", "agents", "spy.md"))

	skills, err := LoadSkills(SkillDirs(proj, "", ""))
	if len(skills) != 1 || skills[0].Name != "good" {
		t.Errorf("skills = %+v; want only the one linked inside", skills)
	}
	if want := filepath.Join(proj, ".claude", "skills", "evil", "SKILL.md") + ": not read: it links to"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("LoadSkills error %v; want it to contain %q", err, want)
	}
	cmds, err := LoadCommands(CommandDirs(proj, "", ""))
	if len(cmds) != 0 || err == nil || !strings.Contains(err.Error(), "steal.md: not read: it links to "+filepath.Join(outside, "cmd.md")) {
		t.Errorf("LoadCommands = %+v, %v; want the linked command refused, named", cmds, err)
	}
	agents, err := LoadAgents(AgentDirs(proj, "", ""))
	if len(agents) != 0 || err == nil || !strings.Contains(err.Error(), "spy.md: not read: it links to") {
		t.Errorf("LoadAgents = %+v, %v; want the linked definition refused, named", agents, err)
	}
}

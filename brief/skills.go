package brief

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/internal/frontmatter"
	"github.com/troupe-dev/troupe/permission"
)

// maxDefinitionBytes bounds a skill or command file.
const maxDefinitionBytes = 256 << 10

// Skill is a procedure the user keeps for agents, in Claude Code's format:
// <dir>/<name>/SKILL.md with front matter name, description and optional
// allowed-tools; the body is what the agent reads when it loads it.
type Skill struct {
	Name, Description string
	AllowedTools      []string
	Path              string // the SKILL.md
	Body              string
}

// Dir is the skill's folder: files beside SKILL.md belong to it.
func (s Skill) Dir() string { return filepath.Dir(s.Path) }

// SkillDirs are the folders skills are looked for in, in precedence
// order (a name found earlier wins): the project's .claude/skills and
// .troupe/skills, then the user's ~/.claude/skills and <troupe home>/skills.
func SkillDirs(cwd, userHome, troupeHome string) []string {
	return definitionDirs("skills", cwd, userHome, troupeHome)
}

// CommandDirs are the folders of custom slash commands, in the same order.
func CommandDirs(cwd, userHome, troupeHome string) []string {
	return definitionDirs("commands", cwd, userHome, troupeHome)
}

func definitionDirs(kind, cwd, userHome, troupeHome string) []string {
	var out []string
	if cwd != "" {
		out = append(out, filepath.Join(cwd, ".claude", kind), filepath.Join(cwd, ".troupe", kind))
	}
	if userHome != "" {
		out = append(out, filepath.Join(userHome, ".claude", kind))
	}
	if troupeHome != "" {
		out = append(out, filepath.Join(troupeHome, kind))
	}
	return out
}

// skillName is what a skill may be called.
var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// LoadSkills reads the skills of dirs; a name found in an earlier folder
// wins. A malformed skill is reported (file and line) in the error and
// the others still load.
func LoadSkills(dirs []string) ([]Skill, error) {
	var out []Skill
	var errs []error
	seen := map[string]bool{}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("skills in %s: %w", dir, err))
			}
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			err := linkedInside(path, dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			doc, err := readDefinition(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s := Skill{Name: doc.Text("name"), Description: doc.Text("description"), AllowedTools: ToolList(doc.Strings("allowed-tools")), Path: path, Body: doc.Body}
			if s.Name == "" {
				s.Name = e.Name()
			}
			switch {
			case !skillName.MatchString(s.Name):
				errs = append(errs, fmt.Errorf("%s: name %q: want lower-case letters, digits, - and _ (at most 64)", path, s.Name))
				continue
			case strings.TrimSpace(s.Description) == "":
				errs = append(errs, fmt.Errorf("%s: no description (the agent picks skills by it)", path))
				continue
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// linkedInside refuses a skill or command file (path, found in the
// definition folder dir) that is, or lies in, a link to somewhere outside
// the folder the definitions belong to: the project (for
// <project>/.claude/skills), the user's home (for ~/.claude/skills), the
// folder holding troupe's home (for <home>/skills). A cloned repository's
// .claude/skills/x/SKILL.md linking to ~/.ssh/id_rsa must not reach the
// prompt. It returns an fs.ErrNotExist error for a missing file.
func linkedInside(path, dir string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	root := filepath.Dir(filepath.Dir(dir))
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return fmt.Errorf("%s: not read: it links to %s, outside %s", path, real, root)
	}
	return nil
}

// readDefinition reads and parses a skill or command file; a parse error
// names the file and line.
func readDefinition(path string) (frontmatter.Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return frontmatter.Doc{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return frontmatter.Doc{}, err
	}
	if !st.Mode().IsRegular() {
		return frontmatter.Doc{}, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > maxDefinitionBytes {
		return frontmatter.Doc{}, fmt.Errorf("%s: %d bytes, over the %d a definition may have", path, st.Size(), maxDefinitionBytes)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return frontmatter.Doc{}, fmt.Errorf("%s: %w", path, err)
	}
	doc, err := frontmatter.Parse(string(b))
	if err != nil {
		var fe *frontmatter.Error
		if errors.As(err, &fe) {
			return doc, fmt.Errorf("%s:%d: %s", path, fe.Line, fe.Msg)
		}
		return doc, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// RenderSkills lists skills for the system prompt, "" when there are none.
func RenderSkills(skills []Skill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<skills>\nSkills are procedures the user keeps for tasks like these. When a task matches one, load it with the Skill tool first and follow it.\n")
	for _, s := range skills {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, strings.Join(strings.Fields(s.Description), " "))
	}
	b.WriteString("</skills>")
	return b.String()
}

// Command is a custom slash command: <dir>/<name>.md, or <dir>/<ns>/<name>.md
// called as /ns:name, with optional front matter description,
// argument-hint, model and allowed-tools. Its body is the prompt, with
// $ARGUMENTS and $1...$9 replaced by what follows the command.
type Command struct {
	Name, Description, ArgumentHint, Model string
	AllowedTools                           []string
	Path, Body                             string
}

// commandName is what a command may be called (after the /).
var commandName = regexp.MustCompile(`^[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)*$`)

// LoadCommands reads the commands of dirs; a name found in an earlier
// folder wins. Malformed files are reported and the others still load.
func LoadCommands(dirs []string) (map[string]Command, error) {
	out := map[string]Command{}
	var errs []error
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == dir {
					return filepath.SkipAll
				}
				errs = append(errs, err)
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
				return nil
			}
			rel, _ := filepath.Rel(dir, path)
			name := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".md"), "/", ":")
			if !commandName.MatchString(name) {
				errs = append(errs, fmt.Errorf("%s: /%s is not a command name (letters, digits, - and _, folders as :)", path, name))
				return nil
			}
			if _, ok := out[name]; ok {
				return nil
			}
			if err := linkedInside(path, dir); err != nil {
				errs = append(errs, err)
				return nil
			}
			doc, err := readDefinition(path)
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			out[name] = Command{Name: name, Description: doc.Text("description"), ArgumentHint: doc.Text("argument-hint"), Model: doc.Text("model"),
				AllowedTools: ToolList(doc.Strings("allowed-tools")), Path: path, Body: doc.Body}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// SplitCommand reads a prompt that calls a command ("/name args..."): it
// reports the name and the arguments, and false when the prompt does not
// start with something shaped like a command (so "/etc/hosts is wrong" is
// a plain prompt).
func SplitCommand(prompt string) (name, args string, ok bool) {
	p := strings.TrimLeft(prompt, " \t\n")
	if !strings.HasPrefix(p, "/") {
		return "", "", false
	}
	head, rest, _ := strings.Cut(p[1:], " ")
	head, rest2, nl := strings.Cut(head, "\n")
	if nl {
		rest = rest2 + " " + rest
	}
	if !commandName.MatchString(head) {
		return "", "", false
	}
	return head, strings.TrimSpace(rest), true
}

// Expand returns the command's prompt for args: $ARGUMENTS is all of
// them, $1...$9 each (split like a shell: spaces, with "..." or '...'
// keeping one together). A body that uses neither gets the arguments
// appended, so that nothing the user typed is lost.
func (c Command) Expand(args string) string {
	fields := splitArgs(args)
	body := c.Body
	used := strings.Contains(body, "$ARGUMENTS")
	body = strings.ReplaceAll(body, "$ARGUMENTS", args)
	body = positional.ReplaceAllStringFunc(body, func(m string) string {
		used = true
		i, _ := strconv.Atoi(m[1:])
		if i <= len(fields) {
			return fields[i-1]
		}
		return ""
	})
	body = strings.TrimSpace(body)
	if !used && args != "" {
		body += "\n\nARGUMENTS: " + args
	}
	return body
}

var positional = regexp.MustCompile(`\$[1-9]\b`)

func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	has := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, has = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// ToolList splits a front matter tool list written Claude Code's ways
// (a YAML list, "Read, Grep", or "Read Grep Bash(git diff *)") into its
// entries (permission.SplitRules).
func ToolList(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, permission.SplitRules(v)...)
	}
	return out
}

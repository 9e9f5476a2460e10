package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrNotFound is wrapped by Find's error for a name no folder holds.
var ErrNotFound = errors.New("workflow: no workflow of that name")

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Dirs returns the folders named workflows are looked for in, first
// match wins: the project's .claude/workflows and .troupe/workflows, then
// the user's (~/.claude/workflows and the troupe home's workflows).
func Dirs(project, userHome, troupeHome string) []string {
	var out []string
	if project != "" {
		out = append(out, filepath.Join(project, ".claude", "workflows"), filepath.Join(project, ".troupe", "workflows"))
	}
	if userHome != "" {
		out = append(out, filepath.Join(userHome, ".claude", "workflows"))
	}
	if troupeHome != "" {
		out = append(out, filepath.Join(troupeHome, "workflows"))
	}
	return out
}

// Find returns the path of the workflow called name (name.js or
// name.mjs) in the first of dirs that has it.
func Find(dirs []string, name string) (string, error) {
	if !namePattern.MatchString(name) {
		return "", fmt.Errorf("workflow name %q: want letters, digits, '.', '_' and '-'", name)
	}
	for _, d := range dirs {
		for _, ext := range []string{".js", ".mjs"} {
			p := filepath.Join(d, name+ext)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %q (looked in %s)", ErrNotFound, name, strings.Join(dirs, ", "))
}

// Named is a workflow found in a folder.
type Named struct {
	Name, Path string
	Meta       Meta
	Err        error // it does not parse
}

// List returns the named workflows of dirs (a name in an earlier folder
// hides the same name in a later one), sorted by name.
func List(dirs []string) []Named {
	seen := map[string]bool{}
	var out []Named
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".js")
			if !ok {
				name, ok = strings.CutSuffix(e.Name(), ".mjs")
			}
			if !ok || e.IsDir() || seen[name] || !namePattern.MatchString(name) {
				continue
			}
			seen[name] = true
			n := Named{Name: name, Path: filepath.Join(d, e.Name())}
			n.Meta, n.Err = metaOfFile(n.Path)
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b Named) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MaxScript bounds a script's size.
const MaxScript = 1 << 20

// Load reads and parses the script at path.
func Load(path string) (*Script, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load workflow: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("load workflow %s: %w: not a regular file", path, fs.ErrInvalid)
	}
	if st.Size() > MaxScript {
		return nil, fmt.Errorf("load workflow %s: %d bytes, at most %d", path, st.Size(), MaxScript)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load workflow: %w", err)
	}
	return Parse(filepath.Base(path), string(b))
}

func metaOfFile(path string) (Meta, error) {
	s, err := Load(path)
	if err != nil {
		return Meta{}, err
	}
	return s.Meta, nil
}

// Package memory keeps what agents remember of a project between
// sessions, in Claude Code's layout: a folder per project holding an
// index, MEMORY.md, and topic files (*.md) it points to. Load renders the
// folder for the lead's system prompt, index first and size-capped; a
// dream (memory consolidation, see Lock and Due) rewrites the folder from
// the transcripts of the sessions since the last dream, through tools
// that Guard keeps inside it.
//
// Functions here are safe for concurrent use; Lock excludes other
// processes too.
package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Index is the memory folder's index file, loaded first.
const Index = "MEMORY.md"

// DefaultMaxBytes caps what Load renders.
const DefaultMaxBytes = 24 << 10

// Dir returns the memory folder of the project in cwd under a troupe
// home: <home>/projects/<slug of cwd>/memory.
func Dir(home, cwd string) string {
	return filepath.Join(home, "projects", Slug(cwd), "memory")
}

// Slug turns a path into a folder name: letters and digits kept, the rest
// as '-'.
func Slug(path string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, path), "-")
}

// Load renders the memory folder dir for a system prompt: MEMORY.md, then
// the other *.md files by name, each under its name, cut at max bytes in
// all (0 means DefaultMaxBytes) with a note saying what was left out. A
// missing folder or an empty one gives "".
func Load(dir string, max int) (string, error) {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("load memory: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && e.Name() != Index {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == Index && e.Type().IsRegular() }) {
		names = append([]string{Index}, names...)
	}
	const head = "<memory>\nWhat you remember of this project from earlier sessions (" + "%s" + "). Trust it less than what you read in the code now.\n"
	var b strings.Builder
	fmt.Fprintf(&b, head, dir)
	var left []string
	for i, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("load memory: %w", err)
		}
		text := strings.TrimSpace(string(data))
		if text == "" {
			continue
		}
		part := "\n## " + name + "\n\n" + text + "\n"
		if b.Len()+len(part) > max {
			room := max - b.Len() - len("\n## "+name+"\n\n\n")
			if room > 200 && i == 0 { // the index, cut, rather than nothing
				cut := text[:room]
				for !utf8.ValidString(cut) {
					cut = cut[:len(cut)-1]
				}
				b.WriteString("\n## " + name + "\n\n" + cut + "\n")
				left = append(left, name+" (cut)")
			} else {
				left = append(left, name)
			}
			continue
		}
		b.WriteString(part)
	}
	if b.Len() == len(fmt.Sprintf(head, dir)) && len(left) == 0 {
		return "", nil
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "\n[Memory over its %d-byte budget; not loaded: %s. Read them from %s when they matter.]\n", max, strings.Join(left, ", "), dir)
	}
	b.WriteString("</memory>")
	return b.String(), nil
}

// Guard returns a Write/Edit guard (tool/filetool Config.Guard) that refuses
// any path outside dir, and any file there but Markdown: a dream's tools
// may write only memory files.
func Guard(dir string) func(ctx context.Context, path string) error {
	dir = filepath.Clean(dir)
	return func(_ context.Context, path string) error {
		p := filepath.Clean(path)
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
			return fmt.Errorf("%s is outside the memory folder %s: a dream writes only memory files", path, dir)
		}
		if strings.Contains(rel, string(filepath.Separator)) || !strings.HasSuffix(rel, ".md") {
			return fmt.Errorf("%s: memory files are Markdown files (*.md) directly in %s", path, dir)
		}
		return nil
	}
}

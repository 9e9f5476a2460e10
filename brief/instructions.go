package brief

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/internal/inert"
)

// Limits of project instructions.
const (
	DefaultMaxFileBytes  = 40 << 10  // one file, imports counted separately
	DefaultMaxTotalBytes = 200 << 10 // everything loaded for one agent
	MaxImportDepth       = 5         // @path imports within imports
)

// ProjectFiles are the instruction files looked for in the working folder
// and each folder above it, in this order within a folder.
var ProjectFiles = []string{"CLAUDE.md", filepath.Join(".claude", "CLAUDE.md"), "CLAUDE.local.md", "AGENTS.md"}

// Scopes of a Source.
const (
	ScopeUser    = "user"    // the user's own, for every project
	ScopeProject = "project" // the working folder or a folder above it
	ScopeNested  = "nested"  // a subfolder, loaded when the agent first works there
	ScopeImport  = "import"  // imported by another file with @path
)

// Source is one loaded instruction file.
type Source struct {
	Path       string
	Scope      string
	ImportedBy string // for imports
	Content    string // as shown to the model (cut to the limits)
	Size       int    // the file's size in bytes
	Cut        bool   // Content is shorter than the file
	Note       string // why something was left out (an import refused)
}

// Options configure a Loader.
type Options struct {
	Cwd string // the working folder (absolute)
	// UserFiles are the user's own instruction files, loaded first
	// (such as ~/.claude/CLAUDE.md and troupe's <home>/AGENTS.md).
	UserFiles []string
	// Readable reports whether the agent may read path (absolute, real):
	// an @path import outside what it may read is refused. Nil allows
	// imports under Cwd and under the folders of UserFiles only.
	Readable     func(path string) bool
	MaxFileBytes int // per file; 0 means DefaultMaxFileBytes
	MaxTotal     int // in all; 0 means DefaultMaxTotalBytes
}

// Loader loads the instructions of one agent: those known at its start,
// and later those of the subfolders it works in (Nested). It is safe for
// concurrent use.
type Loader struct {
	opts Options

	mu     sync.Mutex
	seen   map[string]bool // real paths loaded (or refused), so each is shown once
	total  int
	dirsOK map[string]bool // subfolders already looked at by Nested
}

// NewLoader returns a Loader.
func NewLoader(opts Options) *Loader {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTotal <= 0 {
		opts.MaxTotal = DefaultMaxTotalBytes
	}
	if opts.Cwd != "" {
		opts.Cwd = filepath.Clean(opts.Cwd)
	}
	return &Loader{opts: opts, seen: map[string]bool{}, dirsOK: map[string]bool{}}
}

// Instructions are the loaded files, in the order the model sees them:
// user files, then the folders from the top down to the working folder
// (nearer files come later and take precedence), each followed by what
// it imports.
type Instructions struct {
	Sources []Source
}

// Start loads the user files and those of the working folder and every
// folder above it, up to but not including the file system root.
func (l *Loader) Start() *Instructions {
	in := &Instructions{}
	for _, f := range l.opts.UserFiles {
		l.add(in, f, ScopeUser, "", 0)
	}
	if l.opts.Cwd == "" {
		return in
	}
	var dirs []string
	for d := l.opts.Cwd; ; d = filepath.Dir(d) {
		if filepath.Dir(d) == d { // the root itself is not read
			break
		}
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, name := range ProjectFiles {
			l.add(in, filepath.Join(dirs[i], name), ScopeProject, "", 0)
		}
	}
	return in
}

// Nested returns the instructions of the folders between the working
// folder (excluded) and the folder of path (included) not loaded yet: an
// agent that reads or edits a file in a subfolder learns that subfolder's
// rules then. It returns nil when there is nothing new, and for a path
// outside the working folder.
func (l *Loader) Nested(path string) *Instructions {
	if l.opts.Cwd == "" {
		return nil
	}
	dir := filepath.Dir(filepath.Clean(path))
	rel, err := filepath.Rel(l.opts.Cwd, dir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	var dirs []string
	for d := dir; d != l.opts.Cwd; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	in := &Instructions{}
	for i := len(dirs) - 1; i >= 0; i-- {
		l.mu.Lock()
		done := l.dirsOK[dirs[i]]
		l.dirsOK[dirs[i]] = true
		l.mu.Unlock()
		if done {
			continue
		}
		for _, name := range ProjectFiles {
			l.add(in, filepath.Join(dirs[i], name), ScopeNested, "", 0)
		}
	}
	if len(in.Sources) == 0 {
		return nil
	}
	return in
}

// importRE finds @path references: an @ at the start of a line or after a
// space, followed by a path that starts like one (./ ../ ~/ / or a name
// with a slash or a dot).
var importRE = regexp.MustCompile(`(?:^|[\s(])@((?:~/|\.{1,2}/|/)?[A-Za-z0-9_.\-][A-Za-z0-9_.\-/]*)`)

// add loads file (when it exists and was not loaded yet) and its imports.
func (l *Loader) add(in *Instructions, file, scope, by string, depth int) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		if by != "" && !errors.Is(err, fs.ErrNotExist) {
			in.Sources = append(in.Sources, Source{Path: file, Scope: ScopeImport, ImportedBy: by, Note: fmt.Sprintf("not imported: %v", err)})
		} else if by != "" {
			in.Sources = append(in.Sources, Source{Path: file, Scope: ScopeImport, ImportedBy: by, Note: "not imported: no such file"})
		}
		return
	}
	// Before the seen check: a link refused here must not hide the file
	// from a path that may read it.
	if by == "" && !l.mayLoad(file, real, scope) {
		in.Sources = append(in.Sources, Source{Path: file, Scope: scope, Note: LinksOutside(real)})
		return
	}
	l.mu.Lock()
	if l.seen[real] {
		l.mu.Unlock()
		if by != "" {
			in.Sources = append(in.Sources, Source{Path: file, Scope: ScopeImport, ImportedBy: by, Note: "not imported again: already loaded (or an import cycle)"})
		}
		return
	}
	l.seen[real] = true
	l.mu.Unlock()
	if by != "" && !l.readable(real) {
		in.Sources = append(in.Sources, Source{Path: file, Scope: ScopeImport, ImportedBy: by, Note: "not imported: outside the folders the agent may read"})
		return
	}

	content, size, cut, err := l.read(real)
	if err != nil {
		in.Sources = append(in.Sources, Source{Path: file, Scope: scope, ImportedBy: by, Note: fmt.Sprintf("not read: %v", err)})
		return
	}
	if content == "" && size == 0 {
		return
	}
	src := Source{Path: file, Scope: scope, ImportedBy: by, Content: content, Size: size, Cut: cut}
	if by != "" {
		src.Scope = ScopeImport
	}
	in.Sources = append(in.Sources, src)
	for _, ref := range imports(content) {
		target := ref
		switch {
		case strings.HasPrefix(ref, "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			target = filepath.Join(home, ref[2:])
		case !filepath.IsAbs(ref):
			target = filepath.Join(filepath.Dir(file), ref)
		}
		if depth+1 > MaxImportDepth {
			in.Sources = append(in.Sources, Source{Path: target, Scope: ScopeImport, ImportedBy: file, Note: fmt.Sprintf("not imported: imports go %d levels deep at most", MaxImportDepth)})
			continue
		}
		l.add(in, target, scope, file, depth+1)
	}
}

// imports returns the @path references of text outside code: fenced
// blocks and inline code spans are skipped.
func imports(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = stripCodeSpans(line)
		for _, m := range importRE.FindAllStringSubmatch(line, -1) {
			p := strings.TrimRight(m[1], ".,;:)")
			if strings.ContainsAny(p, "/") || strings.Contains(p, ".") {
				out = append(out, p)
			}
		}
	}
	return out
}

// stripCodeSpans blanks the inline code spans of line (backticks
// included), so that a reference inside one is not taken and the text on
// either side does not join into one.
func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			b.WriteByte(' ')
			continue
		}
		if in {
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// LinksOutside is the note of an instruction file (CLAUDE.md, AGENTS.md, a
// rule or a skill) left unread because it is a link to real, outside the
// folders the agent may read: a cloned repository's CLAUDE.md linking to
// ~/.ssh/id_rsa must not put the key into the prompt.
func LinksOutside(real string) string {
	return "not read: it links to " + real + ", outside the folders the agent may read"
}

// mayLoad reports whether a project or nested instruction file, whose real
// path is real, may be read: when the agent may read real, or when the
// file is no link out of its folder and that folder is one the agent's
// instructions come from: the working folder or one above it (whose files
// are read whoever may read them, as Claude Code does), their .claude
// folder when it lies inside them, or a folder inside the working folder.
// The user's own files are theirs to link anywhere.
func (l *Loader) mayLoad(file, real, scope string) bool {
	if scope == ScopeUser || l.readable(real) {
		return true
	}
	folder := filepath.Dir(file)
	dir, err := filepath.EvalSymlinks(folder)
	if err != nil || filepath.Dir(real) != dir {
		return false // the file links out of its folder
	}
	within := func(d, root string) bool {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		return d == root || strings.HasPrefix(d, root+string(filepath.Separator))
	}
	if scope == ScopeProject {
		if folder == l.opts.Cwd || strings.HasPrefix(l.opts.Cwd, folder+string(filepath.Separator)) {
			return true // on the way from the working folder up
		}
		return within(dir, filepath.Dir(folder)) // <folder>/.claude
	}
	return within(dir, l.opts.Cwd)
}

// readable reports whether an import target may be read.
func (l *Loader) readable(real string) bool {
	if l.opts.Readable != nil {
		return l.opts.Readable(real)
	}
	roots := []string{l.opts.Cwd}
	for _, f := range l.opts.UserFiles {
		roots = append(roots, filepath.Dir(f))
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			r = rr
		}
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// read returns the text of file within the per-file and total limits.
func (l *Loader) read(file string) (text string, size int, cut bool, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, false, err
	}
	if !st.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("not a regular file")
	}
	size = int(st.Size())
	// Reserve the room first (loads may run at once, from parallel tool
	// calls), and give back what the file did not use.
	l.mu.Lock()
	room := min(l.opts.MaxFileBytes, l.opts.MaxTotal-l.total)
	if room > 0 {
		l.total += room
	}
	l.mu.Unlock()
	if room <= 0 {
		return "", size, true, nil
	}
	used := 0
	defer func() {
		l.mu.Lock()
		l.total -= room - used
		l.mu.Unlock()
	}()
	b, err := io.ReadAll(io.LimitReader(f, int64(room)+1))
	if err != nil {
		return "", 0, false, err
	}
	if len(b) > room {
		b, cut = b[:room], true
		for len(b) > 0 && !utf8.Valid(b) { // do not split a character
			b = b[:len(b)-1]
		}
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return "", 0, false, fmt.Errorf("not UTF-8 text")
	}
	used = len(b)
	return string(b), size, cut, nil
}

// Render returns the instructions as the model sees them, "" when there
// are none.
func (in *Instructions) Render() string {
	if in == nil || len(in.Sources) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<project-instructions>\nInstructions the user keeps for agents (CLAUDE.md, AGENTS.md). Follow them: they override the defaults above. Nearer folders come later and take precedence over farther ones.\n")
	for _, s := range in.Sources {
		b.WriteString("\n")
		switch {
		case s.Note != "":
			fmt.Fprintf(&b, "(%s: %s)\n", s.Path, s.Note)
			continue
		case s.Scope == ScopeUser:
			fmt.Fprintf(&b, "Contents of %s (the user's instructions for every project):\n", s.Path)
		case s.Scope == ScopeImport:
			fmt.Fprintf(&b, "Contents of %s (imported by %s):\n", s.Path, s.ImportedBy)
		default:
			fmt.Fprintf(&b, "Contents of %s:\n", s.Path)
		}
		b.WriteString(inert.Tags(strings.TrimRight(s.Content, "\n"))) // a file cannot close the block
		b.WriteString("\n")
		if s.Cut {
			fmt.Fprintf(&b, "[cut: the file has %d bytes; only the first %d are shown, to keep instructions within their size limits]\n", s.Size, len(s.Content))
		}
	}
	b.WriteString("</project-instructions>")
	return b.String()
}

// Reminder returns nested instructions as a message for an agent already
// at work, "" when there are none.
func (in *Instructions) Reminder() string {
	text := in.Render()
	if text == "" {
		return ""
	}
	return "<system-reminder>\nThe folder you are working in has instructions of its own:\n" + text + "\n</system-reminder>"
}

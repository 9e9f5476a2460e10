package filetool

import (
	"context"
	_ "embed"
	"encoding/json"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

//go:embed grep.md
var grepDescription string

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The regular expression to search for in file contents (Go RE2 syntax)"},
    "path": {"type": "string", "description": "The file or directory to search in. Defaults to the working directory"},
    "glob": {"type": "string", "description": "Only search files whose name matches this glob, such as \"*.js\" or \"*.{ts,tsx}\"; a glob with a '/' matches the path below the searched directory; a leading '!' excludes"},
    "type": {"type": "string", "enum": ["c", "cpp", "go", "java", "js", "json", "md", "py", "rust", "sh", "ts", "yaml"], "description": "Only search files of this type; more efficient than glob for standard file types"},
    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "\"content\" shows matching lines (with -A/-B/-C context, -n line numbers, head_limit), \"files_with_matches\" shows file paths (with head_limit), \"count\" shows match counts per file (with head_limit). Defaults to \"files_with_matches\""},
    "-i": {"type": "boolean", "description": "Case insensitive search"},
    "-n": {"type": "boolean", "description": "Show line numbers in output. Requires output_mode \"content\". Defaults to true"},
    "-A": {"type": "integer", "minimum": 0, "description": "Number of lines to show after each match. Requires output_mode \"content\""},
    "-B": {"type": "integer", "minimum": 0, "description": "Number of lines to show before each match. Requires output_mode \"content\""},
    "-C": {"type": "integer", "minimum": 0, "description": "Number of lines to show before and after each match. Requires output_mode \"content\""},
    "head_limit": {"type": "integer", "minimum": 0, "description": "Show only the first N lines (content) or entries (files_with_matches, count) of the output. 0 or omitted means all, up to the output size limit"},
    "offset": {"type": "integer", "minimum": 0, "description": "Skip the first N lines or entries of the output before applying head_limit"},
    "multiline": {"type": "boolean", "description": "Multiline mode: . matches newlines and patterns can span lines. Default false"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

const (
	// maxGrepFile bounds the size of a file Grep searches; larger ones are
	// skipped, with a note.
	maxGrepFile = 32 << 20
	// maxGrepLineLen is how many bytes of one line Grep shows.
	maxGrepLineLen = 500
	// maxGrepContext bounds -A, -B and -C.
	maxGrepContext = 100
)

// fileTypes are Grep's type filters: base-name globs per type.
var fileTypes = map[string][]string{
	"c":    {"*.c", "*.h"},
	"cpp":  {"*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"},
	"go":   {"*.go"},
	"java": {"*.java"},
	"js":   {"*.js", "*.mjs", "*.cjs", "*.jsx", "*.vue"},
	"json": {"*.json", "*.jsonl", "*.geojson"},
	"md":   {"*.md", "*.markdown", "*.mdx", "*.mkd", "*.mdown"},
	"py":   {"*.py", "*.pyi"},
	"rust": {"*.rs"},
	"sh":   {"*.sh", "*.bash", "*.zsh", "*.ksh", ".bashrc", ".bash_profile", ".zshrc", ".profile"},
	"ts":   {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"yaml": {"*.yaml", "*.yml"},
}

// Grep is the Grep tool: it searches file contents with a regular
// expression.
type Grep struct {
	cfg  Config
	desc string
}

var _ tool.Tool = (*Grep)(nil)

// NewGrep returns the Grep tool.
func NewGrep(cfg Config) *Grep {
	cfg = cfg.withDefaults()
	desc := strings.NewReplacer("{{types}}", typeNames(), "256 KiB", size(cfg.MaxReadBytes)).Replace(grepDescription)
	return &Grep{cfg: cfg, desc: desc}
}

type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	Type       string `json:"type"`
	OutputMode string `json:"output_mode"`
	IgnoreCase bool   `json:"-i"`
	LineNums   *bool  `json:"-n"`
	After      *int   `json:"-A"`
	Before     *int   `json:"-B"`
	Context    int    `json:"-C"`
	HeadLimit  int    `json:"head_limit"`
	Offset     int    `json:"offset"`
	Multiline  bool   `json:"multiline"`
}

// Spec implements tool.Tool.
func (g *Grep) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Grep", Description: g.desc, InputSchema: json.RawMessage(grepSchema)}
}

// ReadOnly implements tool.Tool: a Grep that decodes changes nothing.
func (*Grep) ReadOnly(input json.RawMessage) bool {
	var in grepInput
	_, ok := tool.Decode("Grep", input, &in)
	return ok
}

// grepQuery is a validated Grep input.
type grepQuery struct {
	pattern       string
	m             *matcher
	mode          string
	lineNums      bool
	before, after int
	headLimit     int
	offset        int
	filter        fileFilter
}

// Run implements tool.Tool.
func (g *Grep) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in grepInput
	if res, ok := tool.Decode("Grep", call.Input, &in); !ok {
		return res, nil
	}
	q, res, ok := parseGrep(in)
	if !ok {
		return res, nil
	}
	base, res, ok := searchPath(g.cfg, "Grep", in.Path, false)
	if !ok {
		return res, nil
	}
	if st, err := os.Stat(base); err == nil && st.IsDir() {
		if res, ok := confineDir(g.cfg, "Grep", base); !ok {
			return res, nil
		}
	}
	st, err := os.Stat(base)
	if err != nil {
		return tool.Errorf("Grep: cannot search %s: %v", base, unwrapPath(err)), nil
	}
	withheld := 0
	walk := func(ctx context.Context, push func(found) bool) error {
		if !st.IsDir() { // a file is searched whatever the filters say
			if g.cfg.withheld(base) {
				withheld++
			} else {
				push(found{abs: base, mtime: st.ModTime()})
			}
			return nil
		}
		return walkFiles(ctx, base, g.cfg.Root, 0, func(abs, rel string) error {
			switch {
			case !q.filter.match(rel):
			case g.cfg.withheld(abs):
				withheld++
			case !push(found{abs: abs}): // the modification time is looked up for matched files only
				return errSearchStopped
			}
			return nil
		})
	}
	res, walkErr, err := g.search(ctx, q, base, walk, &withheld)
	switch {
	case err != nil:
		return tool.Result{}, err
	case walkErr != nil:
		return tool.Errorf("Grep: cannot search %s: %v", base, unwrapPath(walkErr)), nil
	}
	return res, nil
}

// parseGrep validates the input and compiles its pattern and filters.
func parseGrep(in grepInput) (grepQuery, tool.Result, bool) {
	fail := func(format string, args ...any) (grepQuery, tool.Result, bool) {
		return grepQuery{}, tool.Errorf(format, args...), false
	}
	q := grepQuery{pattern: in.Pattern, mode: in.OutputMode, headLimit: in.HeadLimit, offset: in.Offset, lineNums: true}
	if in.Pattern == "" {
		return fail("Grep: pattern is required")
	}
	switch q.mode {
	case "":
		q.mode = "files_with_matches"
	case "content", "files_with_matches", "count":
	default:
		return fail("Grep: output_mode must be \"content\", \"files_with_matches\" or \"count\", got %q", in.OutputMode)
	}
	if in.LineNums != nil {
		q.lineNums = *in.LineNums
	}
	q.before, q.after = in.Context, in.Context
	if in.Before != nil {
		q.before = *in.Before
	}
	if in.After != nil {
		q.after = *in.After
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"-A", q.after}, {"-B", q.before}, {"-C", in.Context}, {"head_limit", in.HeadLimit}, {"offset", in.Offset}} {
		if f.v < 0 {
			return fail("Grep: %s must not be negative, got %d", f.name, f.v)
		}
	}
	q.before, q.after = min(q.before, maxGrepContext), min(q.after, maxGrepContext)
	flags := ""
	if in.IgnoreCase {
		flags += "i"
	}
	if in.Multiline {
		flags += "sm"
	}
	m, err := newMatcher(in.Pattern, flags, in.Multiline)
	if err != nil {
		return fail("Grep: invalid regular expression %q: %v (Go RE2 syntax: no lookaround or backreferences; escape literal characters such as ( [ { . * + ? with a backslash)",
			in.Pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	q.m = m
	for _, gl := range strings.Fields(in.Glob) {
		neg := strings.HasPrefix(gl, "!")
		gl = strings.TrimPrefix(gl, "!")
		m, err := compileGlob(strings.TrimPrefix(gl, "./"))
		if err != nil {
			return fail("Grep: invalid glob %q: %v", gl, err)
		}
		q.filter.globs = append(q.filter.globs, fileGlob{m: m, negate: neg, path: strings.Contains(gl, "/")})
	}
	if in.Type != "" {
		globs, ok := fileTypes[in.Type]
		if !ok {
			return fail("Grep: unknown type %q; known types: %s (or use glob)", in.Type, typeNames())
		}
		for _, gl := range globs {
			m, _ := compileGlob(gl)
			q.filter.types = append(q.filter.types, m)
		}
	}
	return q, tool.Result{}, true
}

// fileFilter selects the files a directory search reads.
type fileFilter struct {
	globs []fileGlob
	types []*globMatcher // base-name globs; one must match when any
}

// fileGlob is one glob of Grep's glob input.
type fileGlob struct {
	m      *globMatcher
	negate bool // "!glob": exclude
	path   bool // has a '/': matched against the relative path, not the base name
}

// match reports whether the file at rel (relative to the searched
// directory) is to be searched: no excluding glob matches, some including
// glob matches (when there are any), and some type glob matches (when
// there are any).
func (f *fileFilter) match(rel string) bool {
	base := path.Base(rel)
	included, anyInclude := false, false
	for _, g := range f.globs {
		subject := base
		if g.path {
			subject = rel
		}
		hit := g.m.Match(subject)
		if g.negate {
			if hit {
				return false
			}
			continue
		}
		anyInclude = true
		included = included || hit
	}
	if anyInclude && !included {
		return false
	}
	if len(f.types) == 0 {
		return true
	}
	for _, m := range f.types {
		if m.Match(base) {
			return true
		}
	}
	return false
}

// typeNames returns the type filter names, sorted and comma separated.
func typeNames() string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

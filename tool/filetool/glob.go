package filetool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

//go:embed glob.md
var globDescription string

const globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The glob pattern to match files against, such as \"**/*.go\" or \"src/**/*.{ts,tsx}\""},
    "path": {"type": "string", "description": "The directory to search in. Omit it to search the working directory; never pass \"undefined\" or \"null\""}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// MaxGlobResults is how many paths one Glob call lists.
const MaxGlobResults = 1000

// Glob is the Glob tool: it finds files by name pattern.
type Glob struct{ cfg Config }

var _ tool.Tool = (*Glob)(nil)

// NewGlob returns the Glob tool.
func NewGlob(cfg Config) *Glob { return &Glob{cfg: cfg.withDefaults()} }

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// Spec implements tool.Tool.
func (*Glob) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Glob", Description: globDescription, InputSchema: json.RawMessage(globSchema)}
}

// ReadOnly implements tool.Tool: a Glob that decodes changes nothing.
func (*Glob) ReadOnly(input json.RawMessage) bool {
	var in globInput
	_, ok := tool.Decode("Glob", input, &in)
	return ok
}

// found is one file a search found.
type found struct {
	abs   string
	mtime time.Time
}

// Run implements tool.Tool.
func (g *Glob) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var in globInput
	if res, ok := tool.Decode("Glob", call.Input, &in); !ok {
		return res, nil
	}
	if in.Pattern == "" {
		return tool.Errorf("Glob: pattern is required"), nil
	}
	base, res, ok := searchPath(g.cfg, "Glob", in.Path, true)
	if !ok {
		return res, nil
	}
	pat := in.Pattern
	for strings.HasPrefix(pat, "./") {
		pat = pat[2:]
	}
	prefix, rest := splitStatic(filepath.ToSlash(pat))
	start := base
	switch {
	case filepath.IsAbs(pat):
		start = filepath.FromSlash(prefix)
		if start == "" {
			start = string(filepath.Separator)
		}
	case prefix != "":
		start = filepath.Join(base, filepath.FromSlash(prefix))
	}
	m, err := compileGlob(rest)
	if err != nil {
		return tool.Errorf("Glob: invalid pattern %q: %v", in.Pattern, err), nil
	}
	maxDepth := 0
	if !strings.Contains(rest, "**") && !strings.Contains(rest, "{") {
		maxDepth = strings.Count(rest, "/") + 1
	}
	var hits globResult
	if st, err := os.Stat(start); err == nil && st.IsDir() {
		if res, ok := confineDir(g.cfg, "Glob", start); !ok {
			return res, nil
		}
		scan := &globScan{open: openScanDir, match: m, withhold: g.cfg.Withhold, maxDepth: maxDepth, keep: MaxGlobResults}
		hits, err = scanGlob(ctx, scan, filepath.Clean(start), g.cfg.Root)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return tool.Result{}, ctxErr
		}
		if err != nil {
			return tool.Errorf("Glob: cannot search %s: %v", start, unwrapPath(err)), nil
		}
	}
	if hits.total == 0 {
		return tool.Result{Content: fmt.Sprintf("No files found matching %q in %s", in.Pattern, base) + withheldNote(hits.withheld)}, nil
	}
	var b strings.Builder
	for _, f := range hits.files {
		b.WriteString(g.cfg.display(f.abs))
		b.WriteByte('\n')
	}
	if hits.total > len(hits.files) {
		fmt.Fprintf(&b, "[Showing the %d most recently modified of %d matching files. Use a more specific pattern or path to see the others.]\n", len(hits.files), hits.total)
	}
	return tool.Result{Content: strings.TrimSuffix(b.String(), "\n") + withheldNote(hits.withheld)}, nil
}

// sortByMtime sorts files newest first, then by path.
func sortByMtime(files []found) {
	sort.Slice(files, func(i, j int) bool {
		if !files[i].mtime.Equal(files[j].mtime) {
			return files[i].mtime.After(files[j].mtime)
		}
		return files[i].abs < files[j].abs
	})
}

// searchPath resolves the path input of Glob or Grep (empty means Root):
// it must exist, and be a directory when dirOnly.
func searchPath(cfg Config, name, path string, dirOnly bool) (string, tool.Result, bool) {
	if path == "" || path == "undefined" || path == "null" {
		return cfg.Root, tool.Result{}, true
	}
	abs := cfg.abs(path)
	st, err := os.Stat(abs)
	if errors.Is(err, iofs.ErrNotExist) {
		return "", tool.Errorf("%s: path does not exist: %s", name, abs), false
	}
	if err != nil {
		return "", tool.Errorf("%s: cannot access %s: %v", name, abs, unwrapPath(err)), false
	}
	if dirOnly && !st.IsDir() {
		return "", tool.Errorf("%s: path %s is not a directory; give the directory to search in", name, abs), false
	}
	return abs, tool.Result{}, true
}

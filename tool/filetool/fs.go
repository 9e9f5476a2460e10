// Package filetool provides the file tools a model calls: Read, Write, Edit, Glob
// and Grep. Their names, input fields and behaviour follow Claude Code's
// tools of the same names, so that prompts written for one work with the
// other; each tool's description for the model is the .md file beside it.
//
// Paths in inputs are absolute, or relative to Config.Root. Failures the
// model should see (a missing file, an ambiguous edit, an invalid pattern)
// are error Results that name the path or field; Run returns a Go error only
// when its context ends.
//
// Glob and Grep walk directory trees the way ripgrep does by default: they
// never enter .git, do not follow symbolic links to directories, and skip
// what .gitignore files exclude (those in the tree, those of its ancestors
// up to the repository's top, and .git/info/exclude); git's global excludes
// file is not read. Write and Edit replace files atomically (a temp file in
// the same directory, fsynced, then renamed), keeping an existing file's
// mode; they write through symbolic links, but rename inside the folder
// they opened, so a link swapped in meanwhile is replaced, not followed.
//
// Config.Confine and Config.Withhold connect the tools to the permission
// layer: the first sees the real path of every file opened through a
// link (and may refuse it), the second keeps denied files out of Glob and
// Grep results.
//
// The tools keep no state between calls and are safe for concurrent use;
// two concurrent writes to one file leave one of them, whole.
package filetool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/troupe-dev/troupe/llm"
	"github.com/troupe-dev/troupe/tool"
)

// Defaults for Config.
const (
	// DefaultMaxReadBytes is how much text one Read or Grep call returns.
	DefaultMaxReadBytes = 256 << 10
	// DefaultMaxLines is how many lines Read shows when no limit is given.
	DefaultMaxLines = 2000
)

const (
	// maxLineLen is how many bytes of one line Read shows.
	maxLineLen = 2000
	// sniffLen is how much of a file is examined to tell text from binary.
	sniffLen = 8 << 10
)

// Config is shared by the file tools.
type Config struct {
	// Root is the working directory: relative paths resolve against it,
	// and Glob and Grep show paths below it relative to it. Empty means
	// the process's working directory.
	Root string
	// MaxReadBytes bounds the text one Read or Grep call returns;
	// 0 means DefaultMaxReadBytes.
	MaxReadBytes int64
	// MaxLines is how many lines Read shows when no limit is given;
	// 0 means DefaultMaxLines.
	MaxLines int
	// MaxImageBytes bounds the image file Read shows as a picture; 0
	// means llm.MaxImageBytes, the most a model takes.
	MaxImageBytes int64
	// Now is the clock; nil means time.Now. No tool reads it yet: it is
	// here for checks of a file's age against the last Read of it.
	Now func() time.Time
	// Guard, when set, is asked before Write or Edit changes a file, with
	// the file's absolute, cleaned path. An error refuses the change: it
	// becomes the call's error result ("Write: refused: <error>") and the
	// file is untouched. Read, Glob and Grep never call it. A coordinator
	// uses it to enforce one writer per file.
	Guard func(ctx context.Context, path string) error
	// Confine, when set, closes the gap between the permission check and
	// the file's use: a link may have been swapped in between. The tools
	// call it with the tool's name, the absolute, cleaned path they were
	// given (what the permission layer judged) and the real path of what
	// they actually opened (Read, Edit, each file Grep reads, the folder
	// Glob and Grep search) or will replace (Write, Edit: the file's real
	// folder, opened, then the name in it), whenever the two differ. An
	// error refuses the call (for Grep: skips the file) and nothing is
	// read or written. The permission layer provides it
	// (approve.Approver.Confine), judging real as it judged abs.
	Confine func(tool, abs, real string) error
	// Withhold, when set, keeps files out of Glob and Grep results: it is
	// asked with each found file's absolute path, and a true answer drops
	// the file (Grep does not read it); the result notes how many were
	// withheld. The permission layer provides it from its Read deny rules
	// (approve.Approver.Withholds).
	Withhold func(abs string) bool
}

// guard runs the Guard, if any, for the tool name on abs; a refusal is
// the call's error result.
func (c Config) guard(ctx context.Context, name, abs string) (tool.Result, bool) {
	if c.Guard == nil {
		return tool.Result{}, true
	}
	if err := c.Guard(ctx, abs); err != nil {
		return tool.Errorf("%s: refused: %v", name, err), false
	}
	return tool.Result{}, true
}

// withDefaults returns c with its zero fields filled and Root absolute.
func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(c.Root); err == nil {
		c.Root = abs
	}
	if c.MaxReadBytes <= 0 {
		c.MaxReadBytes = DefaultMaxReadBytes
	}
	if c.MaxLines <= 0 {
		c.MaxLines = DefaultMaxLines
	}
	if c.MaxImageBytes <= 0 {
		c.MaxImageBytes = llm.MaxImageBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// All returns the file tools: Read, Write, Edit, Glob and Grep.
func All(cfg Config) []tool.Tool {
	return []tool.Tool{NewRead(cfg), NewWrite(cfg), NewEdit(cfg), NewGlob(cfg), NewGrep(cfg)}
}

// abs resolves a path from the model: "~" and "~/x" against the home
// directory, other relative paths against Root.
func (c Config) abs(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Root, p)
	}
	return filepath.Clean(p)
}

// display returns abs relative to Root when it is below Root, else abs.
func (c Config) display(abs string) string {
	if within(c.Root, abs) {
		if rel, err := filepath.Rel(c.Root, abs); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// notFound returns the error Result for a missing path, suggesting similar
// names in its directory.
func notFound(name, abs string) tool.Result {
	dir := filepath.Dir(abs)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return tool.Errorf("%s: file not found: %s (its directory %s does not exist either)", name, abs, dir)
	}
	if s := similarNames(dir, filepath.Base(abs)); len(s) > 0 {
		for i := range s {
			s[i] = filepath.Join(dir, s[i])
		}
		return tool.Errorf("%s: file not found: %s. Did you mean %s?", name, abs, strings.Join(s, " or "))
	}
	return tool.Errorf("%s: file not found: %s", name, abs)
}

// statErr returns the error Result for a failed stat or open of abs.
func statErr(name, abs string, err error) tool.Result {
	if os.IsNotExist(err) {
		return notFound(name, abs)
	}
	return tool.Errorf("%s: cannot access %s: %v", name, abs, unwrapPath(err))
}

// unwrapPath drops the operation and path of an *os.PathError, which the
// messages already name.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// looksBinary reports whether head, the first bytes of a file, look like
// binary data: a NUL byte, or when strict, mostly bytes that are not text:
// over a quarter of them invalid UTF-8 or control characters other than
// tab, newline, vertical tab, form feed, carriage return, backspace and
// escape (a sequence cut at the end of head is not held against it). Text
// in another encoding, such as Latin-1, has a few invalid bytes among
// many valid ones: it is text.
func looksBinary(head []byte, strict bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if !strict {
		return false
	}
	head = trimIncompleteRune(head)
	odd := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && !strings.ContainsRune("\t\n\v\f\r\b\x1b", rune(c)) || c == 0x7f {
				odd++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			odd++
		}
		i += n
	}
	return odd*4 > len(head)
}

// trimIncompleteRune drops the start of a multi-byte UTF-8 sequence that b
// ends with, if it is incomplete.
func trimIncompleteRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// countLines returns the number of lines of s; a last line without a
// newline counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural returns "1 line", "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// size formats a byte count for messages.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return plural(int(n), "byte")
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

package filetool

import (
	"bytes"
	"regexp"
	"strings"
)

// maxIgnoreFile bounds how much of one .gitignore file is read.
const maxIgnoreFile = 1 << 20

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	re      *regexp.Regexp // matches a path relative to the file's directory
	negate  bool           // "!pattern": re-include
	dirOnly bool           // "pattern/": directories only
	// name, when ok, matches the last segment alone, in place of re:
	// an unanchored "*.log" or "node_modules".
	name nameMatch
}

// ignoreFile holds the rules of one .gitignore file. Its rules see paths
// relative to base, the file's directory.
type ignoreFile struct {
	base  string // slash-separated, relative to the walk's top; "" for the top
	rules []ignoreRule
}

// parseIgnore parses the content of a .gitignore file that sits in base,
// with git's rules (gitignore(5)):
//
//   - blank lines and lines starting with '#' are skipped; "\#" is a
//     literal '#';
//   - trailing spaces are dropped unless escaped with '\';
//   - a leading '!' re-includes what an earlier pattern excluded ("\!" is
//     a literal '!');
//   - a trailing '/' makes the pattern match directories only;
//   - a '/' at the start or in the middle anchors the pattern to base;
//     otherwise it matches a name at any depth below base;
//   - '*', '?', '[...]' and '**' are as in globRegexp.
//
// Lines that do not form a valid pattern are skipped, as git ignores them.
func parseIgnore(base string, data []byte) *ignoreFile {
	if len(data) > maxIgnoreFile {
		data = data[:maxIgnoreFile]
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	f := &ignoreFile{base: base}
	for line := range strings.SplitSeq(string(data), "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

// parseIgnoreLine parses one line of a .gitignore file.
func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces go unless the last one is escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	if line == "" {
		return ignoreRule{}, false
	}
	body, err := globRegexp(line, gitignore)
	if err != nil {
		return ignoreRule{}, false
	}
	if !anchored {
		body = `(?:.*/)?` + body
		r.name = quickName(line)
	}
	re, err := regexp.Compile(`^` + body + `$`)
	if err != nil {
		return ignoreRule{}, false
	}
	r.re = re
	return r, true
}

// match reports whether the file's rules decide about rel (a slash-separated
// path relative to the walk's top), and if so whether rel is ignored. The
// last matching rule decides.
func (f *ignoreFile) match(rel string, isDir bool) (ignored, decided bool) {
	sub := rel
	if f.base != "" {
		var ok bool
		sub, ok = strings.CutPrefix(rel, f.base+"/")
		if !ok || sub == "" {
			return false, false
		}
	}
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.name.ok {
			if r.name.match(sub[strings.LastIndexByte(sub, '/')+1:]) {
				return !r.negate, true
			}
			continue
		}
		if r.re.MatchString(sub) {
			return !r.negate, true
		}
	}
	return false, false
}

// ignoreStack is the ignore files in force in one directory, shallowest
// first (a file of a deeper directory overrides a shallower one).
type ignoreStack []*ignoreFile

// ignored reports whether rel (relative to the walk's top) is ignored. It
// does not look at rel's parents: a walk never enters an ignored directory,
// which is how git makes a file below an excluded directory impossible to
// re-include.
func (s ignoreStack) ignored(rel string, isDir bool) bool {
	for i := len(s) - 1; i >= 0; i-- {
		if ign, ok := s[i].match(rel, isDir); ok {
			return ign
		}
	}
	return false
}

// matchIn is match for the entry name of the directory dir (relative to
// the walk's top, "" for the top) without building the entry's path:
// rules on the name alone look at name, and the others see the path
// built in scratch, which is reused.
func (f *ignoreFile) matchIn(dir, name string, isDir bool, scratch *[]byte) (ignored, decided bool) {
	// The entry's path relative to base is pre + "/" + name, or name
	// when pre is "".
	pre := dir
	if f.base != "" {
		switch {
		case dir == f.base:
			pre = ""
		case len(dir) > len(f.base) && dir[len(f.base)] == '/' && dir[:len(f.base)] == f.base:
			pre = dir[len(f.base)+1:]
		default:
			return false, false
		}
	}
	built := false
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.name.ok {
			if r.name.match(name) {
				return !r.negate, true
			}
			continue
		}
		if !built {
			*scratch = appendJoin((*scratch)[:0], pre, name)
			built = true
		}
		if r.re.Match(*scratch) {
			return !r.negate, true
		}
	}
	return false, false
}

// ignoredIn is ignored for the entry name of the directory dir (see
// ignoreFile.matchIn).
func (s ignoreStack) ignoredIn(dir, name string, isDir bool, scratch *[]byte) bool {
	for i := len(s) - 1; i >= 0; i-- {
		if ign, ok := s[i].matchIn(dir, name, isDir, scratch); ok {
			return ign
		}
	}
	return false
}

// appendJoin appends join(dir, name) to b.
func appendJoin(b []byte, dir, name string) []byte {
	if dir != "" {
		b = append(append(b, dir...), '/')
	}
	return append(b, name...)
}

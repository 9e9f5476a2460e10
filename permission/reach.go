package permission

import (
	"path"
	"strings"
)

// argsTouched returns the files command c names in its arguments to read,
// made absolute, and the folders below which it may read files it does
// not name: grep -r x src reads below src, git diff reads any changed
// file, and a word expanded at run time may name anything ("/").
func argsTouched(c Command, env pathEnv) (reads, scans []string) {
	if len(c.Args) == 0 {
		return nil, nil
	}
	if !c.Args[0].Literal {
		return nil, []string{"/"}
	}
	words, lit := c.words()
	name, args := cleanBase(words[0]), words[1:]
	var files, dirs []string
	spec, known := commands[name]
	switch {
	case name == "git":
		reads, scans = gitTouched(args, env)
	case name == "find":
		files, _ = findArgs(args)
	case known && (spec.args == argText || spec.args == argRaw):
		files, _, _ = spec.read(name, args) // date -f FILE
		lit = true
	case known:
		files, dirs, _ = spec.read(name, args)
	default:
		// Any other command: every word but an option may be a file.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				files = append(files, a)
			} else if _, v, ok := strings.Cut(a, "="); ok {
				files = append(files, v)
			}
		}
	}
	abs := func(list []string, out *[]string) {
		for _, f := range list {
			if f == "" || f == "-" {
				continue
			}
			if p, ok := resolve(f, env.cwd, env.home); ok && !deviceFile(p) {
				*out = append(*out, p)
			}
		}
	}
	abs(files, &reads)
	abs(dirs, &scans)
	if !lit {
		for _, w := range c.Args[1:] {
			if !w.Literal {
				scans = append(scans, globRoot(w.Value, env))
			}
		}
	}
	return reads, scans
}

// globRoot returns the folder below which the files a word expanded at
// run time lie: the leading folders of a plain glob (src/*.go: src), or
// "/" for anything else.
func globRoot(w string, env pathEnv) string {
	if strings.ContainsAny(w, "$`{\\'\"") {
		return "/"
	}
	if p, ok := resolve(staticPrefix(w), env.cwd, env.home); ok {
		return p
	}
	return "/"
}

// reached returns the folders below which the commands of s may read
// files they do not name (see argsTouched).
func reached(s Script, env pathEnv) []string {
	var out []string
	for _, c := range s.Commands {
		_, dirs := argsTouched(c, env)
		out = append(out, dirs...)
	}
	return out
}

// reachRule returns the first of rules, as a Read rule, that may match a
// file below one of dirs, and that folder. Check cannot list a folder,
// so a command that reads a whole folder holding a denied file asks.
func (p Policy) reachRule(rules []Rule, req Request, dirs []string) (*Rule, string) {
	for i := range rules {
		r := rules[i]
		if !r.covers("Read") {
			continue
		}
		for _, d := range dirs {
			if r.Specifier == "" {
				return &rules[i], d
			}
			base := r.Base
			if base == "" {
				base = req.Cwd
			}
			pat, ok := pathPattern(r.Specifier, base, p.Home)
			if !ok || mayHold(splitPath(pat), splitPath(d)) {
				return &rules[i], d
			}
		}
	}
	return nil, ""
}

// mayHold reports whether the pattern (split into segments) may match a
// path in or below the folder dir: its leading segments match the
// folder's, or it matches the folder or one of its ancestors.
func mayHold(pat, dir []string) bool {
	for ; len(dir) > 0; pat, dir = pat[1:], dir[1:] {
		if len(pat) == 0 || pat[0] == "**" {
			return true
		}
		if ok, err := path.Match(pat[0], dir[0]); err != nil || !ok {
			return false
		}
	}
	return true
}

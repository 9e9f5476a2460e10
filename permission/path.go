package permission

import (
	"path"
	"strings"
)

// resolve makes p absolute: ~/ against home, relative against dir. The
// result is cleaned and uses slashes. It reports false when p needs a
// home that is unknown or names another user's home (~user).
func resolve(p, dir, home string) (string, bool) {
	p = toSlash(p)
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		return path.Join(toSlash(home), p[1:]), true
	case strings.HasPrefix(p, "~"):
		return "", false
	case path.IsAbs(p):
		return path.Clean(p), true
	}
	if dir == "" {
		return "", false
	}
	return path.Join(toSlash(dir), p), true
}

func toSlash(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// within reports whether p is dir or below it; both are clean and
// absolute.
func within(p, dir string) bool {
	dir = path.Clean(toSlash(dir))
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// inside reports whether the absolute path p is inside cwd or one of dirs.
func inside(p, cwd string, dirs []string) bool {
	if cwd != "" && within(p, cwd) {
		return true
	}
	for _, d := range dirs {
		if d != "" && within(p, d) {
			return true
		}
	}
	return false
}

// pathPattern turns a rule's path specifier into an absolute glob:
//
//	//abs/path  absolute
//	~/x        below home
//	/x, ./x    anchored at the rule's base (the request's cwd if unset)
//	x/y        anchored at base (a slash inside anchors, as in gitignore)
//	x          any depth below base
//
// It reports false when the pattern cannot be resolved (no home or base).
func pathPattern(spec, base, home string) (string, bool) {
	spec = strings.TrimSuffix(toSlash(spec), "/")
	switch {
	case strings.HasPrefix(spec, "//"):
		return path.Clean(spec[1:]), true
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		if home == "" {
			return "", false
		}
		return path.Join(toSlash(home), spec[1:]), true
	}
	if base == "" {
		return "", false
	}
	base = path.Clean(toSlash(base))
	switch {
	case strings.HasPrefix(spec, "/"):
		return path.Join(base, spec), true
	case strings.HasPrefix(spec, "./"):
		return path.Join(base, spec[2:]), true
	case !strings.Contains(spec, "/"):
		return strings.TrimSuffix(base, "/") + "/**/" + spec, true
	}
	return path.Join(base, spec), true
}

// matchPath reports whether the absolute, clean path p or one of its
// ancestors matches the absolute glob pattern (gitignore style: ** spans
// any number of segments, * and ? and [...] stay inside one).
func matchPath(pattern, p string) bool {
	pat := splitPath(pattern)
	segs := splitPath(p)
	for n := len(segs); n >= 0; n-- {
		if matchSegs(pat, segs[:n]) {
			return true
		}
	}
	return false
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			// Collapse runs of ** and try every split.
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

package permission

import (
	"path"
	"strings"
)

// real returns where the absolute, clean path abs really points, through
// Policy.Realpath; without it, abs itself.
func (p Policy) real(abs string) string {
	if p.Realpath == nil || abs == "" {
		return abs
	}
	r := p.Realpath(abs)
	if r == "" {
		return abs
	}
	return path.Clean(toSlash(r))
}

// insideReal reports whether the real path r lies inside the request's
// working directories, themselves resolved.
func (p Policy) insideReal(r string, req Request) bool {
	dirs := make([]string, 0, len(req.Dirs))
	for _, d := range req.Dirs {
		if d != "" {
			dirs = append(dirs, p.real(path.Clean(toSlash(d))))
		}
	}
	cwd := req.Cwd
	if cwd != "" {
		cwd = p.real(path.Clean(toSlash(cwd)))
	}
	return inside(r, cwd, dirs)
}

// realPattern returns the absolute glob pat with its leading segments
// without wildcards resolved through Realpath, so that a rule naming a
// folder through a link (or below a home or working directory that is a
// link) matches the real paths below it.
func (p Policy) realPattern(pat string) string {
	if p.Realpath == nil {
		return pat
	}
	segs := strings.Split(pat, "/")
	n := 0
	for n < len(segs) && !strings.ContainsAny(segs[n], `*?[\`) {
		n++
	}
	if n == len(segs) {
		return p.real(pat)
	}
	prefix := strings.Join(segs[:n], "/")
	if prefix == "" {
		return pat
	}
	return strings.TrimSuffix(p.real(prefix), "/") + "/" + strings.Join(segs[n:], "/")
}

// DeniesRead reports whether a deny rule for reading (a Read rule, which
// also covers Glob and Grep) matches the absolute path abs, as written or
// where it really points; relative rules without a base resolve against
// cwd. File tools use it to withhold denied files from search results.
func (p Policy) DeniesRead(abs, cwd string) bool {
	abs, ok := resolve(abs, cwd, p.Home)
	if !ok {
		return false
	}
	var t target
	for i := range p.Deny {
		if !p.Deny[i].covers("Read") {
			continue
		}
		if t.path == "" {
			t = target{path: abs, real: p.real(abs)}
		}
		if p.matchTool(p.Deny[i], Request{Tool: "Read", Cwd: cwd}, t, true) {
			return true
		}
	}
	return false
}

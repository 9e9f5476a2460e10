package permission

import (
	"path"
	"strings"
)

// Follow returns p for an agent that works in to, a copy of the folder
// from (a git worktree of the project checked out at from): every path
// rule whose pattern lies in from gains a twin at the same place in to.
// A ./ or relative rule (Read(./secret.txt), Edit(src/**)) whose base is
// in from is anchored at the matching folder of to too, and so is an
// absolute or ~/ rule naming a path in from. So deny and ask rules keep
// the worktree's copy of the files they protect, and allow rules allow
// it. The rules as they were stay: the agent may still reach from. Rules
// without a base already resolve against the agent's own folder.
func (p Policy) Follow(from, to string) Policy {
	from, to = path.Clean(toSlash(from)), path.Clean(toSlash(to))
	if from == "." || to == "." || from == to {
		return p
	}
	p.Allow = p.follow(p.Allow, from, to)
	p.Ask = p.follow(p.Ask, from, to)
	p.Deny = p.follow(p.Deny, from, to)
	return p
}

func (p Policy) follow(rules []Rule, from, to string) []Rule {
	out := append([]Rule(nil), rules...)
	for _, r := range rules {
		if !isPathTool(r.Tool) || r.Specifier == "" {
			continue
		}
		spec := toSlash(r.Specifier)
		if strings.HasPrefix(spec, "//") || spec == "~" || strings.HasPrefix(spec, "~/") {
			pat, ok := pathPattern(spec, r.Base, p.Home)
			if !ok {
				continue
			}
			if rest, ok := p.below(pat, from); ok {
				c := r
				c.Specifier = "/" + path.Join(to, rest)
				out = append(out, c)
			}
			continue
		}
		if r.Base == "" {
			continue
		}
		if rest, ok := p.below(path.Clean(toSlash(r.Base)), from); ok {
			c := r
			c.Base = path.Join(to, rest)
			out = append(out, c)
		}
	}
	return out
}

// below returns abs relative to dir ("." for dir itself) when abs is dir
// or below it, as written or where both really point.
func (p Policy) below(abs, dir string) (string, bool) {
	for _, pair := range [][2]string{{abs, dir}, {p.realPattern(abs), p.real(dir)}} {
		a, d := pair[0], pair[1]
		if a == d {
			return ".", true
		}
		if rest, ok := strings.CutPrefix(a, strings.TrimSuffix(d, "/")+"/"); ok {
			return rest, true
		}
	}
	return "", false
}

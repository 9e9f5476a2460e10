package permission

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Request is a tool call to decide on.
type Request struct {
	Tool  string          // tool name: Read, Write, Edit, Glob, Grep, Bash, WebFetch, mcp__...
	Input json.RawMessage // the tool's input object
	Cwd   string          // the agent's working directory (absolute)
	Dirs  []string        // further directories the agent may work in (absolute)
	Mode  Mode            // empty is ModeDefault
	// ReadOnly reports that the tool declares it never writes; in plan
	// mode other tools (but Read, Glob, Grep and Bash, which are judged on
	// their input) are refused.
	ReadOnly bool
}

// Decision is Check's answer.
type Decision struct {
	Behavior Behavior
	// Rule is the rule that decided, nil when the mode or a built-in
	// judgement (such as a read inside the working directory) did.
	Rule   *Rule
	Reason string
}

// Policy is a set of rules and what Check needs besides the request.
type Policy struct {
	Allow, Ask, Deny []Rule
	// Home is the user's home directory, for ~/ in rules, paths and
	// commands. Rules under ~/ never allow without it.
	Home string
	// Shell parses a Bash command (package permission/shell provides
	// it). Without it every Bash call asks.
	Shell func(command string) (Script, error)
	// Realpath returns the absolute, slash-separated path abs with its
	// symbolic links resolved; for a path that does not exist yet, its
	// deepest existing ancestor resolved and the rest appended
	// (troupe's internal/realpath.Resolve). Check then judges every path
	// where it really points: allow rules and the working-directory check
	// see the real path, deny and ask rules both the path as written and
	// the real one. Nil compares paths lexically.
	Realpath func(abs string) string
	// Stat reports whether the absolute, slash-separated path abs exists
	// and whether it is a folder, following links (os.Stat). Check uses it
	// to tell git repositories apart: git -C DIR is read-only only when DIR
	// is in the working directory's repository, and a folder holding a
	// HEAD is a git directory whose files are protected. Nil knows no
	// file: git -C DIR then asks for any DIR but the working directory,
	// and only files named HEAD are protected that way.
	Stat func(abs string) (exists, dir bool)
	// Protected are further absolute paths (files or folders) whose
	// writes always ask, like the built-in protected paths (see the
	// package documentation): troupe's settings folder when it is not
	// ~/.troupe.
	Protected []string
}

// Check decides on req. Deny rules win over ask rules, ask rules over
// allow rules; then the mode decides, and what is left asks (denies in
// dontAsk mode). Check does no I/O but through
// Policy.Realpath and Policy.Stat.
func (p Policy) Check(req Request) Decision {
	if req.Mode == "" {
		req.Mode = ModeDefault
	}
	var d Decision
	switch {
	case req.Tool == "Bash":
		d = p.checkBash(req)
	case req.Tool == "Monitor":
		d = p.checkMonitor(req)
	default:
		d = p.checkTool(req)
	}
	if d.Behavior == Ask && req.Mode == ModeDontAsk {
		d.Behavior = Deny
		d.Reason = "dontAsk mode: " + d.Reason
	}
	return d
}

// checkMonitor judges a Monitor call. One that starts a command runs it
// as Bash would, so Bash's rules and analysis judge that command: a Bash
// deny or ask rule cannot be walked around through Monitor. A Monitor
// deny rule refuses it all the same. A monitor of a task, a file or a
// resource is judged as the tool it is.
func (p Policy) checkMonitor(req Request) Decision {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(req.Input, &in)
	d := p.checkTool(req)
	if in.Command == "" || d.Behavior == Deny {
		return d
	}
	b := req
	b.Tool = "Bash"
	b.Input, _ = json.Marshal(map[string]string{"command": in.Command})
	return p.checkBash(b)
}

func decide(b Behavior, r *Rule, format string, args ...any) Decision {
	if r != nil {
		c := *r
		r = &c
	}
	return Decision{Behavior: b, Rule: r, Reason: fmt.Sprintf(format, args...)}
}

// target is what a non-Bash call touches.
type target struct {
	path string // absolute path for file tools, as written
	real string // path with its links resolved (path itself without Realpath)
	host string // for WebFetch
}

func (p Policy) checkTool(req Request) Decision {
	t, err := p.target(req)
	if err != nil {
		return decide(Ask, nil, "cannot read %s input: %v", req.Tool, err)
	}
	match := func(rules []Rule, failClosed bool) *Rule {
		for i := range rules {
			if p.matchTool(rules[i], req, t, failClosed) {
				return &rules[i]
			}
		}
		return nil
	}
	if r := match(p.Deny, true); r != nil {
		return decide(Deny, r, "denied by rule %s", r)
	}
	if contains(freeTools, req.Tool) {
		return decide(Allow, nil, "%s needs no approval", req.Tool)
	}
	readTool, editTool := contains(readTools, req.Tool), contains(editTools, req.Tool)
	if req.Mode == ModePlan && !readTool && !req.ReadOnly {
		return decide(Deny, nil, "plan mode: %s is refused until the plan is approved", req.Tool)
	}
	if req.Mode == ModeBypass {
		return decide(Allow, nil, "bypassPermissions mode")
	}
	if r := match(p.Ask, true); r != nil {
		return decide(Ask, r, "rule %s asks", r)
	}
	if editTool {
		if why := p.protectedWrite(t.path); why != "" {
			return decide(Ask, nil, "%s of a protected path needs approval in every mode: %s", req.Tool, why)
		}
	}
	if r := match(p.Allow, false); r != nil {
		return decide(Allow, r, "allowed by rule %s", r)
	}
	in := t.path != "" && p.insideReal(t.real, req)
	switch {
	case readTool && in:
		return decide(Allow, nil, "read inside the working directories")
	case editTool && in && req.Mode == ModeAcceptEdits:
		return decide(Allow, nil, "acceptEdits mode: edit inside the working directories")
	case readTool || editTool:
		where := "inside"
		if !in {
			where = "outside"
		}
		if t.real != t.path {
			return decide(Ask, nil, "%s of %s (really %s, %s the working directories) needs approval", req.Tool, t.path, t.real, where)
		}
		return decide(Ask, nil, "%s of %s (%s the working directories) needs approval", req.Tool, t.path, where)
	}
	return decide(Ask, nil, "%s needs approval", req.Tool)
}

// target extracts the path or host a call touches.
func (p Policy) target(req Request) (target, error) {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		Pattern      string `json:"pattern"`
		URL          string `json:"url"`
	}
	needs := isPathTool(req.Tool) || req.Tool == "WebFetch"
	if !needs {
		return target{}, nil
	}
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return target{}, err
	}
	if req.Tool == "WebFetch" {
		u, err := url.Parse(in.URL)
		if err != nil || u.Hostname() == "" {
			return target{}, fmt.Errorf("bad url %q", in.URL)
		}
		return target{host: strings.ToLower(u.Hostname())}, nil
	}
	raw := in.FilePath
	if raw == "" {
		raw = in.NotebookPath
	}
	switch req.Tool {
	case "Glob", "Grep", "LS":
		raw = in.Path
		if raw == "" {
			raw = "."
		}
		if req.Tool == "Glob" && in.Pattern != "" {
			raw = raw + "/" + staticPrefix(in.Pattern)
			if path.IsAbs(in.Pattern) || strings.HasPrefix(in.Pattern, "~") {
				raw = staticPrefix(in.Pattern)
			}
		}
	}
	if raw == "" {
		return target{}, fmt.Errorf("no path")
	}
	abs, ok := resolve(raw, req.Cwd, p.Home)
	if !ok {
		return target{}, fmt.Errorf("cannot resolve path %q", raw)
	}
	return target{path: abs, real: p.real(abs)}, nil
}

// staticPrefix returns the leading segments of a glob without wildcards.
func staticPrefix(glob string) string {
	segs := strings.Split(toSlash(glob), "/")
	for i, s := range segs {
		if strings.ContainsAny(s, "*?[{") {
			segs = segs[:i]
			break
		}
	}
	out := strings.Join(segs, "/")
	if out == "" && strings.HasPrefix(glob, "/") {
		return "/"
	}
	if out == "" {
		return "."
	}
	return out
}

// matchTool reports whether r matches a non-Bash call. With failClosed
// (deny and ask rules), a path rule that cannot be resolved matches, and
// a path rule matches the path as written or where it really points (the
// pattern as written or resolved); otherwise (allow rules) only the real
// path against the resolved pattern counts.
func (p Policy) matchTool(r Rule, req Request, t target, failClosed bool) bool {
	if !r.covers(req.Tool) {
		return false
	}
	if r.Specifier == "" {
		return true
	}
	switch {
	case isPathTool(r.Tool):
		if t.path == "" {
			return failClosed
		}
		base := r.Base
		if base == "" {
			base = req.Cwd
		}
		pat, ok := pathPattern(r.Specifier, base, p.Home)
		if !ok {
			return failClosed
		}
		real := t.real
		if real == "" {
			real = t.path
		}
		rp := p.realPattern(pat)
		if matchPath(rp, real) || failClosed && (matchPath(pat, t.path) || matchPath(pat, real)) {
			return true
		}
		// Where names differ only in case, a deny or ask rule covers every
		// spelling (allow rules are not folded: folding grants nothing).
		return failClosed && foldPaths && (matchPath(fold(pat), fold(t.path)) || matchPath(fold(rp), fold(real)))
	case r.Tool == "WebFetch":
		d := strings.ToLower(strings.TrimPrefix(r.Specifier, "domain:"))
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			return strings.HasSuffix(t.host, "."+rest)
		}
		return t.host == d
	}
	return false
}

package permission

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// maxNesting bounds how deep sh -c and eval texts are parsed for deny and
// ask rules, and maxNested how many are parsed in all.
const (
	maxNesting = 3
	maxNested  = 16
)

func (p Policy) checkBash(req Request) Decision {
	var in struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(req.Input, &in); err != nil || in.Command == nil {
		if err == nil {
			err = fmt.Errorf("no command")
		}
		return decide(Ask, nil, "cannot read Bash input: %v", err)
	}
	if p.Shell == nil {
		return decide(Ask, nil, "no shell parser: every command needs approval")
	}
	s, err := p.Shell(*in.Command)
	if err != nil {
		return decide(Ask, nil, "cannot parse command: %v", err)
	}
	if len(s.Commands) == 0 && len(s.Risks) == 0 {
		return decide(Ask, nil, "empty command")
	}
	budget := maxNested
	cands := p.candidates(s, 0, &budget)
	if r := firstBash(p.Deny, cands); r != nil {
		return decide(Deny, r, "denied by rule %s", r)
	}
	env := pathEnv{cwd: req.Cwd, home: p.Home, dirs: req.Dirs, sameRepo: p.sameRepo(req.Cwd)}
	reads, writes := touched(s, env)
	writes = append(writes, written(s, env)...)
	if r, f := p.pathRule(p.Deny, req, reads, writes); r != nil {
		return decide(Deny, r, "%s denied by rule %s", f, r)
	}
	if w := p.dotDotAfterLink(s, env); w != "" && (req.Mode != ModeBypass || len(p.Deny) > 0) {
		return decide(Ask, nil, "%s goes through a link and then ..: the shell takes .. from where the link leads, not from the folder the path names", w)
	}
	reach := reached(s, env)
	if r, dir := p.reachRule(p.Deny, req, reach); r != nil {
		return decide(Ask, r, "the command may read files below %s, where rule %s denies reading", dir, r)
	}
	if req.Mode == ModeBypass {
		if p.hasCommandRules(p.Deny) && opaque(s) {
			return decide(Ask, nil, "bypassPermissions mode, but deny rules cannot see through %s", strings.Join(append(s.Risks, "indirect execution"), ", "))
		}
		return decide(Allow, nil, "bypassPermissions mode")
	}
	if r := firstBash(p.Ask, cands); r != nil {
		return decide(Ask, r, "rule %s asks", r)
	}
	if r, f := p.pathRule(p.Ask, req, reads, writes); r != nil {
		return decide(Ask, r, "%s: rule %s asks", f, r)
	}
	if r, dir := p.reachRule(p.Ask, req, reach); r != nil {
		return decide(Ask, r, "the command may read files below %s, where rule %s asks", dir, r)
	}
	changesDir := false
	for _, c := range s.Commands {
		if len(c.Args) > 0 {
			switch cleanBase(c.Args[0].Value) {
			case "cd", "pushd", "popd":
				changesDir = true
			}
		}
	}
	if req.Mode != ModePlan {
		if why := p.protectedWrites(writes, changesDir); why != "" {
			return decide(Ask, nil, "%s", why)
		}
	}
	var (
		firstAsk *Decision
		used     *Rule
		reasons  []string
	)
	for _, c := range s.Commands {
		d := p.judge(c, s, req, env, changesDir)
		switch d.Behavior {
		case Deny:
			return d
		case Ask:
			if firstAsk == nil {
				firstAsk = &d
			}
		case Allow:
			if d.Rule != nil && used == nil {
				used = d.Rule
			}
			reasons = append(reasons, d.Reason)
		}
	}
	if len(s.Risks) > 0 {
		return decide(Ask, nil, "command uses %s", strings.Join(s.Risks, ", "))
	}
	if firstAsk != nil {
		return *firstAsk
	}
	return Decision{Behavior: Allow, Rule: used, Reason: strings.Join(reasons, "; ")}
}

// judge decides on one simple command of script s.
func (p Policy) judge(c Command, s Script, req Request, env pathEnv, changesDir bool) Decision {
	plan := req.Mode == ModePlan
	show := c.String()
	var writes []string // the files its redirections write
	for _, r := range c.Redirects {
		if r.Dup {
			continue
		}
		if !r.Target.Literal {
			return decide(Ask, nil, "%q redirects to %s, expanded at run time", show, r.Target.Value)
		}
		t, ok := resolve(r.Target.Value, env.cwd, env.home)
		if ok && deviceFile(t) {
			continue
		}
		if !ok || !p.insideReal(p.real(t), req) {
			return decide(Ask, nil, "%q redirects to %s outside the working directories", show, r.Target.Value)
		}
		if r.Write {
			writes = append(writes, t)
			if plan {
				return decide(Ask, nil, "plan mode: %q writes %s", show, r.Target.Value)
			}
		}
	}
	hazard := ""
	for _, a := range c.Assigns {
		if dangerousVar(a.Name) {
			hazard = fmt.Sprintf("%q sets %s", show, a.Name)
			break
		}
	}
	words, lit := c.words()
	if len(words) == 0 {
		if hazard != "" {
			return decide(Ask, nil, "%s", hazard)
		}
		if why := p.redirectWrites(req, writes); why != "" {
			return decide(Ask, nil, "%q %s", show, why)
		}
		return decide(Allow, nil, "%q runs nothing", show)
	}
	name := cleanBase(words[0])
	switch {
	case hazard != "":
	case !c.Args[0].Literal:
		hazard = fmt.Sprintf("command name %s is expanded at run time", words[0])
	case contains(s.Functions, words[0]):
		hazard = fmt.Sprintf("%q calls a shell function", show)
	case indirect[name] && !(name == "env" && len(words) == 1):
		hazard = fmt.Sprintf("%q runs another command through %s", show, name)
	case name == "find" && hasAny(words[1:], "-exec", "-execdir", "-ok", "-okdir"):
		hazard = fmt.Sprintf("%q runs commands with find -exec", show)
	case !lit:
		for _, w := range c.Args {
			if !w.Literal {
				hazard = fmt.Sprintf("%q: argument %s is expanded at run time", show, w.Value)
				break
			}
		}
	}
	ro, why := false, ""
	switch {
	case hazard != "":
	case strings.Contains(words[0], "/"):
		why = "runs a program by path"
	case changesDir:
		why = "the script changes directory"
	case !quietVars(c.Assigns):
		why = "it sets a variable that may change what it does"
	default:
		ro, why = readOnly(words, env)
		if ro {
			ro, why = p.readsInside(c, req, env)
		}
	}
	if plan {
		if ro {
			return decide(Allow, nil, "%q is read-only", show)
		}
		if why == "" {
			why = hazard
		}
		return decide(Deny, nil, "plan mode: %q may write (%s); refused until the plan is approved", show, why)
	}
	if hazard != "" {
		return decide(Ask, nil, "%s", hazard)
	}
	r, unsafe := allowRule(p.Allow, words, env)
	if r != nil || ro {
		// The rule or the read-only judgement covers the command, not
		// the files its redirections write.
		if why := p.redirectWrites(req, writes); why != "" {
			return decide(Ask, nil, "%q %s", show, why)
		}
	}
	switch {
	case r != nil:
		return decide(Allow, r, "%q allowed by rule %s", show, r)
	case ro && len(writes) == 0:
		return decide(Allow, nil, "%q is read-only", show)
	case ro:
		return decide(Allow, nil, "%q is read-only and may write its redirections inside the working directories", show)
	}
	if unsafe != "" {
		return decide(Ask, nil, "%q: option %s may write or run programs, which a prefix rule does not cover", show, unsafe)
	}
	if why != "" {
		return decide(Ask, nil, "%q needs approval (%s)", show, why)
	}
	return decide(Ask, nil, "%q needs approval", show)
}

func hasAny(words []string, opts ...string) bool {
	for _, w := range words {
		if contains(opts, w) {
			return true
		}
	}
	return false
}

// deviceFile reports harmless device paths for redirections.
func deviceFile(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty":
		return true
	}
	return false
}

// opaque reports a script whose effect deny rules cannot fully see.
func opaque(s Script) bool {
	if len(s.Risks) > 0 {
		return true
	}
	for _, c := range s.Commands {
		if len(c.Args) == 0 {
			continue
		}
		if !c.Args[0].Literal || indirect[cleanBase(c.Args[0].Value)] || contains(s.Functions, c.Args[0].Value) {
			return true
		}
	}
	return false
}

// hasCommandRules reports rules that can apply to a command: Bash rules,
// and Read and Edit rules (for the files it reads and writes).
func (p Policy) hasCommandRules(rules []Rule) bool {
	for _, r := range rules {
		if r.covers("Bash") || r.covers("Read") || r.covers("Edit") {
			return true
		}
	}
	return false
}

// candidate is a word list that deny and ask rules are matched against.
type candidate struct {
	words []string
	lit   []bool
}

// candidates returns, for every command of s, its words, its words with
// the program path reduced to a name (/bin/rm -> rm), the commands that
// wrappers run (sudo rm -> rm) and the commands of sh -c and eval texts.
func (p Policy) candidates(s Script, depth int, budget *int) []candidate {
	var out []candidate
	for _, c := range s.Commands {
		if len(c.Args) == 0 {
			continue
		}
		words, _ := c.words()
		lit := make([]bool, len(words))
		for i, w := range c.Args {
			lit[i] = w.Literal
		}
		out = append(out, candidate{words, lit})
		name := cleanBase(words[0])
		if name != words[0] {
			w := append([]string{name}, words[1:]...)
			out = append(out, candidate{w, lit})
		}
		if name == "git" {
			// Deny and ask rules name git's subcommand right after git:
			// git -C . push is git push to them.
			if sub := gitSubcommand(words); sub > 1 {
				out = append(out, candidate{append([]string{"git"}, words[sub:]...), append([]bool{lit[0]}, lit[sub:]...)})
			}
		}
		if name == "find" {
			for i := 1; i+1 < len(words); i++ {
				if contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, words[i]) {
					out = append(out, candidate{words[i+1:], lit[i+1:]})
				}
			}
			continue
		}
		if !indirect[name] {
			continue
		}
		for i := 1; i < len(words); i++ {
			out = append(out, candidate{words[i:], lit[i:]})
		}
		if depth >= maxNesting || p.Shell == nil {
			continue
		}
		text, ok := "", false
		switch {
		case name == "eval":
			text, ok = strings.Join(words[1:], " "), true
		case shells[name]:
			for i := 1; i+1 < len(words); i++ {
				if strings.HasPrefix(words[i], "-") && strings.Contains(words[i], "c") && !strings.HasPrefix(words[i], "--") {
					text, ok = words[i+1], true
					break
				}
			}
		}
		if ok && *budget > 0 {
			*budget--
			if inner, err := p.Shell(text); err == nil {
				out = append(out, p.candidates(inner, depth+1, budget)...)
			}
		}
	}
	return out
}

// firstBash returns the first Bash rule matching a candidate.
func firstBash(rules []Rule, cands []candidate) *Rule {
	for i := range rules {
		for _, c := range cands {
			if matchBash(rules[i], c.words, c.lit) {
				return &rules[i]
			}
		}
	}
	return nil
}

// matchBash reports whether r matches the words. An exact rule needs every
// word literal and equal; a prefix rule needs its words literal and equal
// to the first ones (word by word: git status:* does not match git
// statusx).
func matchBash(r Rule, words []string, lit []bool) bool {
	if !r.covers("Bash") {
		return false
	}
	if r.Specifier == "" {
		return true
	}
	pw, prefix, err := bashPattern(r.Specifier)
	if err != nil || len(words) < len(pw) || (!prefix && len(words) != len(pw)) {
		return false
	}
	for i, w := range pw {
		if !lit[i] || words[i] != w {
			return false
		}
	}
	return true
}

// allowRule returns the first allow rule for the literal words. A prefix
// rule does not cover extra words that make the command write or run
// programs (git status --output=FILE); unsafe names the first such word.
func allowRule(rules []Rule, words []string, env pathEnv) (r *Rule, unsafe string) {
	lit := make([]bool, len(words))
	for i := range lit {
		lit[i] = true
	}
	for i := range rules {
		if !matchBash(rules[i], words, lit) {
			continue
		}
		if bad := extraUnsafe(rules[i], words, env); bad != "" {
			if unsafe == "" {
				unsafe = bad
			}
			continue
		}
		return &rules[i], ""
	}
	return nil, unsafe
}

func extraUnsafe(r Rule, words []string, env pathEnv) string {
	n := 0
	if r.Specifier != "" {
		pw, _, _ := bashPattern(r.Specifier)
		n = len(pw)
	}
	if n == len(words) && r.Specifier != "" {
		return "" // exact words: the rule names them all
	}
	name := cleanBase(words[0])
	if name == "git" {
		if bad := gitGlobalUnsafe(words, n, env); bad != "" {
			return bad
		}
	}
	for _, w := range words[max(n, 1):] {
		if unsafeOption(name, w) {
			return w
		}
	}
	return ""
}

// touched returns the files a script visibly reads (the file arguments
// of its commands, see argsTouched, and input redirections) and writes
// (output redirections), made absolute. Read and Edit rules apply to them.
func touched(s Script, env pathEnv) (reads, writes []string) {
	add := func(list *[]string, w Word) {
		if !w.Literal || w.Value == "" {
			return
		}
		if p, ok := resolve(w.Value, env.cwd, env.home); ok && !deviceFile(p) {
			*list = append(*list, p)
		}
	}
	for _, c := range s.Commands {
		for _, r := range c.Redirects {
			switch {
			case r.Dup:
			case r.Write:
				add(&writes, r.Target)
			default:
				add(&reads, r.Target)
			}
		}
		files, _ := argsTouched(c, env)
		reads = append(reads, files...)
	}
	return reads, writes
}

// pathRule returns the first of rules that matches a read (as Read) or a
// write (as Edit), as written or where it really points.
func (p Policy) pathRule(rules []Rule, req Request, reads, writes []string) (*Rule, string) {
	for i := range rules {
		for _, f := range reads {
			if p.matchTool(rules[i], Request{Tool: "Read", Cwd: req.Cwd}, target{path: f, real: p.real(f)}, true) {
				return &rules[i], f
			}
		}
		for _, f := range writes {
			if p.matchTool(rules[i], Request{Tool: "Edit", Cwd: req.Cwd}, target{path: f, real: p.real(f)}, true) {
				return &rules[i], f
			}
		}
	}
	return nil, ""
}

// written returns the files that the commands of s visibly write through
// their arguments (see writtenArgs), made absolute.
func written(s Script, env pathEnv) []string {
	var out []string
	for _, c := range s.Commands {
		for _, w := range writtenArgs(c) {
			if !w.Literal || w.Value == "" {
				continue
			}
			if f, ok := resolve(w.Value, env.cwd, env.home); ok && !deviceFile(f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// protectedWrites reports why a script that writes the files writes must
// ask whatever rules and mode say, or "": one of them is protected, as
// written or where it really points, or the script changes directory so
// that the files cannot be judged.
func (p Policy) protectedWrites(writes []string, changesDir bool) string {
	for _, f := range writes {
		if why := p.protectedWrite(f); why != "" {
			return "writing a protected path needs approval in every mode: " + why
		}
	}
	if changesDir && len(writes) > 0 {
		return "the script changes directory, so the files it writes cannot be judged"
	}
	return ""
}

// redirectWrites reports why the files a command's redirections write
// (inside the working directories, already checked) need approval, or ""
// when acceptEdits mode or an Edit allow rule covers every one.
func (p Policy) redirectWrites(req Request, writes []string) string {
	if len(writes) == 0 || req.Mode == ModeAcceptEdits {
		return ""
	}
	for _, f := range writes {
		t := target{path: f, real: p.real(f)}
		covered := false
		for i := range p.Allow {
			if p.matchTool(p.Allow[i], Request{Tool: "Edit", Cwd: req.Cwd}, t, false) {
				covered = true
				break
			}
		}
		if !covered {
			return "writes " + f + ": a redirection is a write, which needs acceptEdits mode or an Edit rule"
		}
	}
	return ""
}

// readsInside checks the file arguments of a read-only command c where
// they really point: a link inside the working directories that leads
// outside makes it need approval.
func (p Policy) readsInside(c Command, req Request, env pathEnv) (bool, string) {
	if p.Realpath == nil {
		return true, ""
	}
	reads, _ := touched(Script{Commands: []Command{{Args: c.Args}}}, env)
	for _, f := range reads {
		if r := p.real(f); !p.insideReal(r, req) {
			return false, "reads " + f + ", which leads outside the working directories (" + r + ")"
		}
	}
	return true, ""
}

// dotDotAfterLink returns the first literal word of s (an argument, the
// value of a --name=value argument, or a redirection's target) whose path
// has a ".." after a link: the kernel takes ".." from where the link leads,
// while this package judges paths with ".." taken away as text. "" without
// Policy.Realpath, or when there is none.
func (p Policy) dotDotAfterLink(s Script, env pathEnv) string {
	if p.Realpath == nil {
		return ""
	}
	for _, c := range s.Commands {
		words := append([]Word(nil), c.Args...)
		for _, r := range c.Redirects {
			if !r.Dup {
				words = append(words, r.Target)
			}
		}
		for _, w := range words {
			if !w.Literal || !strings.Contains(w.Value, "..") {
				continue
			}
			vals := []string{w.Value}
			if _, v, ok := strings.Cut(w.Value, "="); ok {
				vals = append(vals, v)
			}
			for _, v := range vals {
				if p.linkDotDot(v, env) {
					return w.Value
				}
			}
		}
	}
	return ""
}

// linkDotDot reports whether path v has a ".." whose folder before it,
// where it really is, has another parent than the folder the text names.
func (p Policy) linkDotDot(v string, env pathEnv) bool {
	segs := strings.Split(toSlash(v), "/")
	for i, seg := range segs {
		if seg != ".." || i == 0 {
			continue
		}
		prefix := strings.Join(segs[:i], "/")
		if prefix == "" {
			continue // "/..": the root's parent is the root
		}
		abs, ok := resolve(prefix, env.cwd, env.home)
		if !ok {
			continue
		}
		if path.Dir(p.real(abs)) != p.real(path.Dir(abs)) {
			return true
		}
	}
	return false
}

// gitGlobalUnsafe returns the first of git's global options (before the
// subcommand) in words, beyond the first n that a rule names, that a
// prefix rule such as Bash(git:*) does not cover, or "": -c and
// --config-env set configuration for this one command, which can name a
// program to run (core.fsmonitor, core.pager, core.sshCommand, alias.x=!,
// diff drivers); -C pointing at another repository than the working
// directory's brings that repository's configuration, which can too.
func gitGlobalUnsafe(words []string, n int, env pathEnv) string {
	dir := env.cwd
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			return "" // the subcommand
		}
		named := i < n
		switch {
		case w == "-c" || strings.HasPrefix(w, "-c") && !strings.HasPrefix(w, "--") || strings.HasPrefix(w, "--config-env"):
			if !named {
				return w
			}
		case w == "-C" && i+1 < len(words):
			i++
			d, ok := resolve(words[i], dir, env.home)
			if !ok {
				return w + " " + words[i]
			}
			dir = d
			if i >= n && !env.inRepo(dir) {
				return w + " " + words[i]
			}
		}
		if gitValueOptions[w] && w != "-C" && i+1 < len(words) {
			i++
		}
	}
	return ""
}

// gitValueOptions are git's global options that take the next word as
// their value.
var gitValueOptions = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--config-env": true, "--super-prefix": true}

// gitSubcommand returns the index in words (git and its arguments) of
// git's subcommand, after its global options; 0 when there is none.
func gitSubcommand(words []string) int {
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case gitValueOptions[w]:
			i++
		case strings.HasPrefix(w, "-"):
		default:
			return i
		}
	}
	return 0
}

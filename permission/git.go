package permission

import (
	"path"
	"strings"
)

// gitGlobal are the options before a git subcommand that keep it
// read-only; -C is handled on its own.
var gitGlobal = map[string]bool{
	"--no-pager": true, "-P": true, "--no-optional-locks": true, "--literal-pathspecs": true,
	"--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-replace-objects": true,
	"--no-lazy-fetch": true, "--no-advice": true,
}

var (
	gitDiffOpts = `-p -u -s -z -R -a -b -w -W -D -c -0 -1 -2 -3 -U? -B? -M? -C? -l? -X? -O@ -S= -G= -I= --patch
		--no-patch --unified= --raw --patch-with-raw --indent-heuristic --no-indent-heuristic --minimal --patience
		--histogram --anchored= --diff-algorithm= --stat? --stat-width= --stat-name-width= --stat-graph-width=
		--stat-count= --compact-summary --numstat --shortstat --dirstat? --cumulative --dirstat-by-file? --summary
		--patch-with-stat --name-only --name-status --submodule? --color? --no-color --color-moved? --no-color-moved
		--color-moved-ws= --no-color-moved-ws --word-diff? --word-diff-regex= --color-words? --no-renames --renames
		--rename-empty --no-rename-empty --check --ws-error-highlight= --full-index --binary --abbrev? --no-abbrev
		--break-rewrites? --find-renames? --find-copies? --find-copies-harder --irreversible-delete --diff-filter=
		--find-object= --pickaxe-all --pickaxe-regex --skip-to= --rotate-to= --relative? --no-relative --text
		--ignore-cr-at-eol --ignore-space-at-eol --ignore-space-change --ignore-all-space --ignore-blank-lines
		--ignore-matching-lines= --inter-hunk-context= --function-context --exit-code --quiet --no-ext-diff
		--no-textconv --ignore-submodules? --src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix=
		--ita-invisible-in-index --ita-visible-in-index --cc --output-indicator-new= --output-indicator-old=
		--output-indicator-context= --output! --ext-diff! --textconv!`
	gitLogOpts = `-n= -i -E -F -P -g -m -r -t -L= --max-count= --skip= --since= --after= --until= --before=
		--since-as-filter= --author= --committer= --grep= --grep-reflog= --all-match --invert-grep --regexp-ignore-case
		--basic-regexp --extended-regexp --fixed-strings --perl-regexp --remove-empty --merges --no-merges
		--min-parents= --max-parents= --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only
		--not --all --branches? --tags? --remotes? --glob= --exclude= --exclude-hidden= --reflog --alternate-refs
		--single-worktree --ignore-missing --bisect --cherry-mark --cherry-pick --left-only --right-only --cherry
		--walk-reflogs --merge --boundary --simplify-by-decoration --show-pulls --full-history --dense --sparse
		--simplify-merges --ancestry-path? --date-order --author-date-order --topo-order --reverse --no-walk? --do-walk
		--pretty? --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= --expand-tabs? --no-expand-tabs
		--notes? --no-notes --show-notes? --standard-notes --no-standard-notes --relative-date --date= --parents
		--children --left-right --graph --show-linear-break? --dd --diff-merges= --no-diff-merges --combined-all-paths
		--remerge-diff --follow --no-follow --decorate? --no-decorate --decorate-refs= --decorate-refs-exclude=
		--clear-decorations --source --mailmap --no-mailmap --use-mailmap --no-use-mailmap --full-diff --log-size
		--show-signature!`
)

// gitSubs are the git subcommands that only read, with their options.
var gitSubs = map[string]options{
	"status": opts(`-s -b -v -z -u? --short --branch --show-stash --porcelain? --long --verbose --untracked-files?
		--ignore-submodules? --ignored? --null --column? --no-column --ahead-behind --no-ahead-behind --renames
		--no-renames --find-renames?`),
	"diff": opts(gitDiffOpts, `--cached --staged --merge-base --no-index --base --ours --theirs`),
	"log":  opts(gitDiffOpts, gitLogOpts),
	"show": opts(gitDiffOpts, gitLogOpts),
	"blame": opts(`-b -l -t -s -e -f -n -w -c -p -h -M? -C? -L= -S@ --root --show-stats --porcelain --line-porcelain
		--incremental --reverse --first-parent --encoding= --contents@ --date= --progress --no-progress --ignore-rev=
		--ignore-revs-file@ --color-lines --color-by-age --score-debug --show-name --show-number --show-email --abbrev?
		--minimal`),
	"rev-parse": opts(`-q --abbrev-ref? --all --branches? --tags? --remotes? --glob= --exclude= --disambiguate=
		--default= --prefix= --verify --quiet --sq --short? --not --symbolic --symbolic-full-name --show-toplevel
		--show-prefix --show-cdup --show-superproject-working-tree --show-ref-format --show-object-format? --git-dir
		--absolute-git-dir --git-common-dir --git-path= --is-inside-git-dir --is-inside-work-tree --is-bare-repository
		--is-shallow-repository --shared-index-path --path-format= --local-env-vars --since= --after= --until=
		--before= --revs-only --no-revs --flags --no-flags`),
	"ls-files": opts(`-c -d -m -o -i -s -u -k -z -t -v -f -x= -X@ --cached --deleted --modified --others --ignored
		--stage --unmerged --killed --directory --no-empty-directory --eol --full-name --recurse-submodules --abbrev?
		--debug --deduplicate --sparse --format= --exclude= --exclude-from@ --exclude-per-directory= --exclude-standard
		--error-unmatch --with-tree= --resolve-undo`),
	"describe": opts(`--all --tags --contains --abbrev? --candidates= --exact-match --debug --long --match= --exclude=
		--always --first-parent --dirty? --broken?`),
	"branch": nil, // gitBranch
	"remote": nil, // gitRemote
}

// gitCall is a git command line split into its parts.
type gitCall struct {
	dir  string   // the directory it runs in (after -C)
	sub  string   // the subcommand, "" if none
	args []string // the subcommand's arguments
	why  string   // why its global options are not read-only, or ""
}

func splitGit(args []string, env pathEnv) gitCall {
	g := gitCall{dir: env.cwd}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case gitGlobal[a]:
		case a == "-C" && i+1 < len(args):
			i++
			d, ok := resolve(args[i], g.dir, env.home)
			if !ok || !inside(d, env.cwd, env.dirs) {
				g.why = "git -C " + args[i] + " runs outside the working directories"
				d = "/"
			} else if !env.inRepo(d) && g.why == "" {
				g.why = "git -C " + args[i] + " works in another git repository than the working directory's, whose configuration can run programs"
			}
			g.dir = d
		case a == "-c" && i+1 < len(args):
			i++
			g.why = "git -c sets configuration, which can run programs"
		case strings.HasPrefix(a, "--git-dir") || strings.HasPrefix(a, "--work-tree") || a == "--bare":
			if g.why == "" {
				g.why = "git " + a + " points git at a repository of its choosing, whose configuration can run programs"
			}
		case strings.HasPrefix(a, "-"):
			if g.why == "" {
				g.why = "git global option " + a + " is not known to be read-only"
			}
		default:
			g.sub, g.args = a, args[i+1:]
			return g
		}
	}
	if g.why == "" {
		g.why = "git without a subcommand"
	}
	return g
}

// gitReadOnly reports whether git with args only reads, and if not why.
// Its paths (operands, files named by options, -C) must lie inside the
// working directories.
func gitReadOnly(args []string, env pathEnv) (bool, string) {
	g := splitGit(args, env)
	if g.why != "" {
		return false, g.why
	}
	table, ok := gitSubs[g.sub]
	if !ok {
		return false, "git " + g.sub + " may write"
	}
	switch g.sub {
	case "branch":
		return gitBranch(g.args)
	case "remote":
		return gitRemote(g.args)
	}
	p := parseArgs(table, g.args, g.sub == "log" || g.sub == "show")
	if p.bad != "" {
		return false, "git " + g.sub + " option " + p.bad + " " + p.why
	}
	for _, f := range append(gitPaths(g.sub, p), p.files...) {
		if f == "-" {
			continue
		}
		if t, ok := resolve(f, g.dir, env.home); !ok || !inside(t, env.cwd, env.dirs) {
			return false, "git " + g.sub + " reaches " + f + " outside the working directories"
		}
	}
	return true, ""
}

// gitPaths returns the words of a parsed git call that may name files:
// every operand (git cannot tell a revision from a path before it looks),
// the path of a rev:path operand, and the file of -L ranges.
func gitPaths(sub string, p parsed) []string {
	out := append([]string(nil), p.operands...)
	for _, o := range p.operands {
		if f, ok := revPath(o); ok {
			out = append(out, f)
		}
	}
	if l, ok := p.seen["-L"]; ok && strings.Contains(l, ":") {
		out = append(out, l[strings.LastIndex(l, ":")+1:])
	}
	return out
}

// revPath returns the path of a rev:path or :stage:path word.
func revPath(w string) (string, bool) {
	_, f, ok := strings.Cut(w, ":")
	if !ok || f == "" {
		return "", false
	}
	if len(f) > 2 && f[1] == ':' && f[0] >= '0' && f[0] <= '3' {
		f = f[2:]
	}
	return f, f != ""
}

// gitShowsContent reports whether a parsed git diff, log or show prints
// file contents (patches, pickaxe searches, line logs).
func gitShowsContent(sub string, p parsed) bool {
	patch := p.has("-p", "-u", "--patch", "-U", "--unified", "-W", "--function-context", "--word-diff",
		"--color-words", "--patch-with-stat", "--patch-with-raw", "--cc", "-c", "--dd", "--remerge-diff", "-S", "-G",
		"-L", "--binary")
	switch sub {
	case "log", "whatchanged":
		return patch
	case "diff", "show", "stash":
		return patch || !p.has("-s", "--no-patch", "--name-only", "--name-status", "--stat", "--numstat",
			"--shortstat", "--raw", "--summary", "--compact-summary", "--dirstat", "--quiet")
	}
	return false
}

// gitTouched returns the files git with args visibly reads and the
// folders whose files it may read without naming them (git diff with no
// pathspec shows every changed file). Every operand counts as a file.
func gitTouched(args []string, env pathEnv) (reads, scans []string) {
	g := splitGit(args, env)
	if g.sub == "" {
		return nil, nil
	}
	var words []string
	table := gitSubs[g.sub]
	p := parseArgs(table, g.args, true)
	if table != nil {
		words = append(gitPaths(g.sub, p), p.files...)
	} else {
		// Any other subcommand: every word but an option may be a path.
		for _, a := range g.args {
			if !strings.HasPrefix(a, "-") {
				words = append(words, a)
			} else if _, v, ok := strings.Cut(a, "="); ok {
				words = append(words, v)
			}
			if f, ok := revPath(a); ok {
				words = append(words, f)
			}
		}
	}
	for _, w := range words {
		if w == "" || w == "-" {
			continue
		}
		if f, ok := resolve(w, g.dir, env.home); ok {
			reads = append(reads, f)
		}
	}
	switch g.sub {
	case "diff", "log", "show", "whatchanged":
		if !gitShowsContent(g.sub, p) {
			return reads, nil
		}
	case "cat-file", "grep", "archive", "format-patch", "stash", "bundle":
	default:
		return reads, nil
	}
	if g.sub == "show" || g.sub == "cat-file" {
		blobs := 0
		for _, o := range p.operands {
			if _, ok := revPath(o); ok {
				blobs++
			} else if g.sub == "show" || !gitObjectType[o] {
				blobs = -1
				break
			}
		}
		if blobs > 0 {
			return reads, nil // only rev:path operands: those files
		}
	}
	for _, a := range g.args {
		if a == "--" && g.sub != "cat-file" {
			return reads, reads // limited to its pathspecs
		}
	}
	// Revisions and paths are not told apart: it may show any file.
	return reads, []string{path.Clean(g.dir)}
}

var gitObjectType = map[string]bool{"blob": true, "tree": true, "commit": true, "tag": true}

// gitBranch allows listing branches only: a bare name would create one.
func gitBranch(args []string) (bool, string) {
	listFlags := map[string]bool{"-a": true, "--all": true, "-r": true, "--remotes": true, "-v": true, "-vv": true,
		"--verbose": true, "--show-current": true, "--color": true, "--no-color": true, "--column": true, "--no-column": true,
		"-i": true, "--ignore-case": true, "--omit-empty": true}
	takesValue := map[string]bool{"--merged": true, "--no-merged": true, "--contains": true, "--no-contains": true,
		"--points-at": true, "--sort": true, "--format": true}
	list := false
	for _, a := range args {
		if a == "--list" || a == "-l" {
			list = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, _ := strings.Cut(a, "=")
		switch {
		case a == "--list" || a == "-l" || listFlags[a]:
		case takesValue[name]:
			if name == a && i+1 < len(args) {
				i++
			}
		case strings.HasPrefix(a, "-"):
			return false, "git branch " + a + " may write"
		case !list:
			return false, "git branch " + a + " creates a branch"
		}
	}
	return true, ""
}

// gitRemote allows listing remotes and reading their URLs.
func gitRemote(args []string) (bool, string) {
	if len(args) > 0 && args[0] == "get-url" {
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") && a != "--push" && a != "--all" {
				return false, "git remote get-url " + a + " is not known"
			}
		}
		return true, ""
	}
	for _, a := range args {
		if a != "-v" && a != "--verbose" {
			return false, "git remote " + a + " may write or reach the network"
		}
	}
	return true, ""
}

package permission

import "path"

// A folder that holds HEAD, objects/ and refs/ is a git directory to git,
// wherever it sits: "git -C folder status" uses it as a repository, and
// its config can name programs git runs (core.fsmonitor with
// core.worktree=.., hooks, filters, diff drivers). A cloned project can
// ship one as plain files, and an agent could write one. So git's global
// options that point it at a repository other than the working
// directory's ask, and writes that make or change such a folder are
// protected (see protected).

// hasHEAD reports whether the absolute folder dir holds a HEAD, which
// git needs in every git directory (a bare repository, .git, a linked
// worktree's). Without Policy.Stat it is false.
func (p Policy) hasHEAD(dir string) bool {
	if p.Stat == nil {
		return false
	}
	ok, _ := p.Stat(path.Join(dir, "HEAD"))
	return ok
}

// gitRepoOf returns the repository git finds from the absolute folder
// dir, looking as git does: the nearest of dir and its ancestors that
// holds a .git (its .git) or is a git directory itself (taken to be one
// when it holds a HEAD: a stricter look than git's, so that asking errs
// on the safe side). "" when there is none.
func (p Policy) gitRepoOf(dir string) string {
	for d := path.Clean(dir); ; d = path.Dir(d) {
		if ok, _ := p.Stat(path.Join(d, ".git")); ok {
			return path.Join(d, ".git")
		}
		if p.hasHEAD(d) {
			return d
		}
		if d == path.Dir(d) {
			return ""
		}
	}
}

// sameRepo returns a function reporting whether git run in the absolute
// folder dir works in the repository of cwd (or, outside any, in none).
// Without Policy.Stat only cwd itself is known to be.
func (p Policy) sameRepo(cwd string) func(dir string) bool {
	cwd = p.real(path.Clean(toSlash(cwd)))
	var own *string
	return func(dir string) bool {
		dir = p.real(path.Clean(toSlash(dir)))
		if dir == cwd {
			return true
		}
		if p.Stat == nil {
			return false
		}
		if own == nil {
			r := p.gitRepoOf(cwd)
			own = &r
		}
		return p.gitRepoOf(dir) == *own
	}
}

// gitDirWrite reports why writing the absolute, clean path abs makes or
// changes a git directory, or "": a file named HEAD (what makes a folder
// a git directory to git); anything in a folder that holds a HEAD, at
// any depth (its config, hooks/, objects/, refs/); a config or commondir
// beside objects/ and refs/ folders.
func (p Policy) gitDirWrite(abs string) string {
	if fold(path.Base(abs)) == fold("HEAD") {
		return abs + " is named HEAD, which makes its folder a git repository to git"
	}
	if p.Stat == nil {
		return ""
	}
	for d := path.Clean(abs); ; d = path.Dir(d) {
		if p.hasHEAD(d) {
			return abs + " is in " + d + ", a git repository's folder (it holds a HEAD)"
		}
		if d == path.Dir(d) {
			break
		}
	}
	switch fold(path.Base(abs)) {
	case "config", "commondir":
		dir := path.Dir(abs)
		_, objects := p.Stat(path.Join(dir, "objects"))
		_, refs := p.Stat(path.Join(dir, "refs"))
		if objects && refs {
			return abs + " would configure " + dir + " as a git repository (it holds objects/ and refs/)"
		}
	}
	return ""
}

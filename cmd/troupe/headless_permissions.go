package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/troupe-dev/troupe/internal/realpath"
	"github.com/troupe-dev/troupe/permission"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/audit"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/permission/shell"
)

// cliArgSource is the Source of the rules given by --allowedTools and
// --disallowedTools.
const cliArgSource = "cliArg"

// headlessApprover builds the permission layer of `troupe -p` from the
// settings files and the flags. It runs before the model is opened, so a
// malformed settings file stops the run before any model call. The
// returned function closes the audit log.
func (a *app) headlessApprover(h *headless, cwd string) (*approve.Approver, func(), error) {
	nop := func() {}
	home, err := a.Home()
	if err != nil {
		return nil, nop, err
	}
	userHome, err := a.HomeDir()
	if err != nil {
		userHome = "" // rules under ~/ then never allow
	}
	s, err := settings.Load(settings.Files(home, cwd), userHome)
	if err != nil {
		return nil, nop, fmt.Errorf("permission settings: %w", err)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.Stderr, "troupe: warning: %s\n", w)
	}
	mode := s.DefaultMode
	if h.permissionMode != "" {
		if mode, err = permission.ParseMode(h.permissionMode); err != nil {
			return nil, nop, cli.Usagef("--permission-mode: %v", err)
		}
	}
	if mode == "" {
		mode = permission.ModeDefault
	}
	p := s.Policy()
	p.Home, p.Shell, p.Realpath = userHome, shell.Parse, realpath.Resolve
	p.Protected = []string{home} // troupe's settings, teams, mailboxes and task lists: a run never rewrites them
	for _, l := range []struct {
		flag  string
		texts []string
		into  *[]permission.Rule
	}{{"--allowedTools", h.allowedTools, &p.Allow}, {"--disallowedTools", h.disallowedTools, &p.Deny}} {
		for _, text := range l.texts {
			for _, rs := range permission.SplitRules(text) {
				r, err := permission.ParseRule(rs)
				if err != nil {
					return nil, nop, cli.Usagef("%s: %v", l.flag, err)
				}
				r.Source, r.Base = cliArgSource, cwd
				*l.into = append(*l.into, r)
			}
		}
	}
	// Loading a skill (the Skill tool) only reads its file; a deny or ask
	// rule for Skill still wins over this.
	p.Allow = append(p.Allow, permission.Rule{Tool: "Skill", Source: "built-in (loading a skill only reads it)"})
	dirs, err := a.addDirs(s.Dirs, h.addDirs)
	if err != nil {
		return nil, nop, err
	}
	if h.promptTimeout <= 0 {
		return nil, nop, cli.Usagef("--permission-prompt-timeout %s: want a positive duration", h.promptTimeout)
	}
	ap := &approve.Approver{Policy: p, Agent: "troupe", Cwd: cwd, Dirs: dirs, Mode: mode, Now: a.Now, Hint: approve.HeadlessHint(p, cwd, dirs)}
	if strings.TrimSpace(h.promptCommand) != "" {
		ap.Asker = &approve.Command{Shell: h.promptCommand, Timeout: h.promptTimeout}
	}
	if h.audit != "" {
		log, err := audit.Open(h.audit, a.Now)
		if err != nil {
			return nil, nop, fmt.Errorf("--audit: %w", err)
		}
		ap.Audit = log
		return ap, func() { log.Close() }, nil
	}
	return ap, nop, nil
}

// addDirs returns the settings' further working folders and those of
// --add-dir (relative to the current folder); one that is not a folder is
// a usage error.
func (a *app) addDirs(fromSettings, flags []string) ([]string, error) {
	dirs := append([]string(nil), fromSettings...)
	for _, d := range flags {
		abs := d
		if !filepath.IsAbs(d) {
			wd, err := a.Getwd()
			if err != nil {
				return nil, err
			}
			abs = filepath.Join(wd, d)
		}
		abs = filepath.Clean(abs)
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, cli.Usagef("--add-dir %s: not a folder", d)
		}
		dirs = append(dirs, abs)
	}
	return dirs, nil
}

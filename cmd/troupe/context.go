package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/cli"

	"github.com/troupe-dev/troupe/brief"
	"github.com/troupe-dev/troupe/permission/approve"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session/kit"
)

// kitRun is what every agent of this run shares, for session/kit.
func (a *app) kitRun() kit.Run {
	user, home := a.UserHomes()
	r := kit.Run{UserHome: user, TroupeHome: home, Hooks: a.hooks, MCP: a.mcp.tools, Now: a.Now, Getenv: a.Getenv, Warn: a.WarnOnce}
	if a.mcp.mgr != nil { // a nil *mcp.Manager in the interface would not be nil
		r.Resources = a.mcp.mgr
	}
	return r
}

// newAgentContext loads what an agent in cwd is told (kit.Run.NewContext),
// with the settings of cwd that shape its model input
// (taskOutputInContext).
func (a *app) newAgentContext(cwd, model string, off bool, appr *approve.Approver) *kit.Context {
	r := a.kitRun()
	if home, err := a.Home(); err == nil {
		on, _, err := settings.Key[*bool](settings.Files(home, cwd), "taskOutputInContext")
		if err != nil {
			a.WarnOnce(err.Error() + "; background output reaches the model (the default)")
		} else if on != nil && !*on {
			r.NoTaskOutput = true
		}
	}
	return r.NewContext(cwd, model, off, appr)
}

// expandCommand turns a prompt that calls a custom slash command ("/name
// args", from .claude/commands or .troupe/commands in the project or the
// user's home) into the command's prompt; its model is used when --model
// is not given. A prompt not shaped like a command is returned as is; an
// unknown command is an error listing the known ones.
func (a *app) expandCommand(h *headless, cwd, prompt string) (string, error) {
	name, args, ok := brief.SplitCommand(prompt)
	if !ok {
		return prompt, nil
	}
	userHome, troupeHome := a.UserHomes()
	cmds, err := brief.LoadCommands(brief.CommandDirs(cwd, userHome, troupeHome))
	if err != nil {
		a.WarnOnce(err.Error())
	}
	c, found := cmds[name]
	if !found {
		names := slices.Sorted(maps.Keys(cmds))
		if len(names) == 0 {
			return "", cli.Usagef("/%s: no such command (custom commands are .md files in .claude/commands or .troupe/commands, here or in your home; there are none)", name)
		}
		return "", cli.Usagef("/%s: no such command; the commands here are /%s", name, strings.Join(names, ", /"))
	}
	if c.Model != "" && h.model.Name == "" {
		h.model.Name = c.Model
	}
	return c.Expand(args), nil
}

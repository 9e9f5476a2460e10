package main

import (
	"io"

	"github.com/troupe-dev/troupe/permission/audit"
	"github.com/troupe-dev/troupe/session/kit"
)

// openHooks reads the hooks of the settings files for a session in cwd.
// A malformed hooks block stops the run before any model call.
func (a *app) openHooks(cwd, session string, log *audit.Log, warn io.Writer) (*kit.Hooks, error) {
	home, err := a.Home()
	if err != nil {
		return nil, err
	}
	hs, err := kit.NewHooks(home, cwd, session, log, warn, a.Now)
	if err != nil {
		return nil, err
	}
	a.hooks = hs // every agent context made from here on runs them
	return hs, nil
}

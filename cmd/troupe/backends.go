package main

import (
	"fmt"
	"os/exec"

	"github.com/troupe-dev/troupe/backend"
	"github.com/troupe-dev/troupe/backend/inprocess"
	"github.com/troupe-dev/troupe/backend/iterm2"
	"github.com/troupe-dev/troupe/backend/tmux"
)

func lookPath(name string) (string, error) { return exec.LookPath(name) }

func newInProcess() backend.Backend { return inprocess.New() }

// newBackend opens the named teammate backend. TROUPE_TMUX_SOCKET names
// the private tmux server to use outside tmux (tests and the demo).
func (a *app) newBackend(name string) (backend.Backend, error) {
	switch name {
	case backend.InProcess:
		return newInProcess(), nil
	case backend.Tmux:
		return tmux.New(tmux.Config{Getenv: a.Getenv, Socket: a.Getenv("TROUPE_TMUX_SOCKET")})
	case backend.ITerm2:
		return iterm2.New(iterm2.Config{Getenv: a.Getenv})
	}
	return nil, fmt.Errorf("unknown teammate backend %q", name)
}

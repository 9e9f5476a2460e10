package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/internal/termtext"
	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/permission/settings"
	"github.com/troupe-dev/troupe/session"
	"github.com/troupe-dev/troupe/session/kit"
	"github.com/troupe-dev/troupe/store/file"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/team"
)

// peerFlags are the flags of a session's presence among other sessions
// (docs/teams.md, "Addressing").
type peerFlags struct {
	name    string // --name
	noPeers bool   // --no-peer-messages
}

func addPeerFlags(f *pflag.FlagSet, p *peerFlags) {
	f.StringVar(&p.name, "name", "", "a short `NAME` other sessions address this one by (ListAgents, SendMessage; troupe sessions lists it); default: the first 8 characters of the session id; /rename changes it")
	f.BoolVar(&p.noPeers, "no-peer-messages", false, "refuse messages from other troupe sessions (also the setting peerMessages: false); the session stays listed")
}

// openPresence registers the session among the running ones (file store:
// <home>/sessions/live and a socket; NATS store: a KV entry and the
// bridge) and routes other sessions' messages to its lead. Closing it
// (at the end of the run) removes the entry and the socket.
func (a *app) openPresence(ctx context.Context, h *headless, lr *leadRun, cwd, kind string) error {
	home, err := a.Home()
	if err != nil {
		return err
	}
	refuse := h.peers.noPeers
	if on, file, err := settings.Key[bool](settings.Files(home, cwd), "peerMessages"); err != nil {
		return err
	} else if file != "" && !on {
		refuse = true
	}
	spec, err := a.StoreSpec()
	if err != nil {
		return err
	}
	local := file.NewSessions(home)
	cfg := kit.PresenceConfig{Registry: local, SocketDir: local.Dir(), Refuse: refuse, Now: a.Now,
		Entry:   peer.Entry{ID: lr.id, Name: h.peers.name, Folder: cwd, Kind: kind},
		Deliver: lr.bg.sess.PeerMessage,
		Log:     slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if spec.URL != "" {
		s, err := natsstore.Open(ctx, spec.URL, spec.Options)
		if err != nil {
			return err
		}
		lr.defer_(func() { s.Close() })
		ss := s.Sessions()
		cfg.Registry, cfg.Bridge = ss, ss
	}
	p, err := kit.OpenPresence(ctx, cfg)
	if err != nil { // the session runs all the same, unreachable by others
		a.WarnOnce(fmt.Sprintf("troupe: other sessions cannot reach this one: %v", err))
		return nil
	}
	lr.presence = p
	lr.defer_(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	})
	return nil
}

// sessionKind is the registry's kind of this lead.
func sessionKind(interactive, coord bool) string {
	switch {
	case coord:
		return peer.KindCoordinator
	case interactive:
		return peer.KindInteractive
	}
	return peer.KindPrint
}

// presenceState follows the lead's runs into the registry's state.
func presenceState(p *kit.Presence, e session.Event) {
	switch e.Kind {
	case session.KindTurnStarted:
		p.SetState(peer.StateWorking)
	case session.KindTurnEnded:
		p.SetState(peer.StateIdle)
	}
}

// addressing is what the lead can message beyond its SendMessage: other
// sessions, and its team's members for ListAgents.
func (lr *leadRun) addressing() kit.Addressing {
	ad := kit.Addressing{Presence: lr.presence, Self: team.LeadName}
	if lt := lr.bg.team; lt != nil {
		ad.Teams, ad.Team = lt.Stores.Teams, lt.Lead.Team
	}
	return ad
}

// peerMessage shows another session's message to the person: a
// stream-json event, or a line on stderr in the text formats.
func (b *background) peerMessage(m peer.Message) {
	if b.out.PeerMessage(m.Sender(), m.Session, m.Summary, m.Text) {
		return
	}
	what := m.Summary
	if what == "" {
		what = m.Text
	}
	b.out.Notice(b.stderr, fmt.Sprintf("%s message from session %s [%s]: %s", b.now().Format("15:04:05.000"),
		termtext.Line(m.Sender()), termtext.Line(peer.Short(m.Session)), termtext.Line(what)))
}

// slashRename is /rename NAME: the session's name in the registry.
func slashRename(ctx context.Context, lr *leadRun, name string) string {
	if lr.presence == nil {
		return "This session is not registered among the running sessions."
	}
	if strings.TrimSpace(name) == "" {
		return "This session is " + lr.presence.Entry().Label() + "; /rename NAME renames it."
	}
	if err := lr.presence.Rename(ctx, name); err != nil {
		return "/rename: " + err.Error()
	}
	return "Other sessions now see this one as " + lr.presence.Entry().Label() + "."
}

// workerPresence lists a worker among the running sessions of its NATS
// store (kind worker). A worker runs jobs, not a conversation: it
// refuses messages.
func (a *app) workerPresence(ctx context.Context, s *natsstore.Store, name, cwd string) (func(), error) {
	ss := s.Sessions()
	p, err := kit.OpenPresence(ctx, kit.PresenceConfig{Registry: ss, Refuse: true, Now: a.Now,
		Entry:   peer.Entry{ID: a.NewID(), Name: name, Folder: cwd, Kind: peer.KindWorker},
		Deliver: func(peer.Message) error { return errors.New("a worker runs jobs, not a conversation") }})
	if err != nil {
		return nil, fmt.Errorf("register the worker: %w", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	}, nil
}

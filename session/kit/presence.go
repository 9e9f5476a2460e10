package kit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/internal/procgroup"
	"github.com/troupe-dev/troupe/peer"
	"github.com/troupe-dev/troupe/tool/peertool"
)

// DefaultHeartbeat is how often a session publishes its entry again (the
// NATS store's entries expire DefaultSessionTTL after the last one).
const DefaultHeartbeat = 10 * time.Second

// PresenceConfig configures OpenPresence.
type PresenceConfig struct {
	Registry peer.Registry
	// Bridge, when set (the NATS store), carries messages to and from
	// sessions on other hosts.
	Bridge peer.Bridge
	// SocketDir is where the session's Unix socket goes (peer.SocketPath
	// falls back to a short folder when the path is too long).
	SocketDir string
	// Entry describes the session: ID, Name, Folder, Kind, Started; Host,
	// PID, its start time, State, Socket and Peers are filled in.
	Entry peer.Entry
	// Refuse makes the session refuse other sessions' messages
	// (--no-peer-messages, peerMessages: false); it stays listed.
	Refuse bool
	// Deliver hands a peer's message to the session (session.PeerMessage).
	Deliver   func(peer.Message) error
	Heartbeat time.Duration // DefaultHeartbeat when 0
	Log       *slog.Logger
	Now       func() time.Time
}

// Presence is a session's entry in the registry, its socket and its
// bridge subscription, kept up until Close. It is the session's Peers
// (peertool) too. It is safe for concurrent use.
type Presence struct {
	cfg    PresenceConfig
	server *peer.Server
	stop   func() // the bridge's, nil without one

	mu    sync.Mutex
	entry peer.Entry // guarded by mu

	wg     sync.WaitGroup
	ctx    context.Context // lifecycle: the heartbeat's; ended by Close
	cancel context.CancelFunc
	once   sync.Once
}

var _ peertool.Peers = (*Presence)(nil)

// OpenPresence publishes the session's entry, listens on its socket and
// its bridge subject, and keeps the entry alive until Close.
func OpenPresence(ctx context.Context, cfg PresenceConfig) (*Presence, error) {
	if cfg.Registry == nil || cfg.Deliver == nil {
		return nil, errors.New("open presence: Registry and Deliver are required")
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := cfg.Entry
	if e.Host == "" {
		e.Host, _ = os.Hostname()
	}
	me := procgroup.ProcessOf(os.Getpid())
	e.PID, e.Start = me.PID, me.Start
	e.State = peer.StateIdle
	e.Peers = !cfg.Refuse
	if e.Started.IsZero() {
		e.Started = cfg.Now()
	}
	p := &Presence{cfg: cfg}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if cfg.SocketDir != "" {
		path, err := peer.SocketPath(cfg.SocketDir, e.ID)
		if err != nil {
			return nil, err
		}
		if p.server, err = peer.Listen(path, peer.ListenConfig{Deliver: p.deliver, Log: cfg.Log}); err != nil {
			return nil, err
		}
		e.Socket = path
	}
	if cfg.Bridge != nil {
		stop, err := cfg.Bridge.ServeBridge(e.ID, p.deliver)
		if err != nil {
			p.Close(ctx)
			return nil, err
		}
		p.stop = stop
	}
	p.entry = e
	if err := p.publish(ctx); err != nil {
		p.Close(ctx)
		return nil, err
	}
	p.wg.Go(p.heartbeat)
	return p, nil
}

// deliver takes a peer's message, unless the session refuses them.
func (p *Presence) deliver(m peer.Message) error {
	if p.cfg.Refuse {
		return errors.New("this session takes no messages from other sessions")
	}
	if m.Session == p.Entry().ID {
		return errors.New("a session cannot message itself")
	}
	return p.cfg.Deliver(m)
}

func (p *Presence) publish(ctx context.Context) error {
	p.mu.Lock()
	p.entry.Updated = p.cfg.Now()
	e := p.entry
	p.mu.Unlock()
	return p.cfg.Registry.Publish(ctx, e)
}

func (p *Presence) heartbeat() {
	t := time.NewTicker(p.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(p.ctx, p.cfg.Heartbeat)
			if err := p.publish(ctx); err != nil && p.ctx.Err() == nil {
				p.cfg.Log.Warn("session registry: heartbeat failed", "err", err)
			}
			cancel()
		}
	}
}

// Entry returns the session's entry as published.
func (p *Presence) Entry() peer.Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entry
}

// Rename changes the session's name (/rename) and publishes it.
func (p *Presence) Rename(ctx context.Context, name string) error {
	name = strings.Join(strings.Fields(name), " ")
	if len(name) > 64 {
		return fmt.Errorf("rename: %q is longer than 64 characters", name)
	}
	p.mu.Lock()
	p.entry.Name = name
	p.mu.Unlock()
	return p.publish(ctx)
}

// SetState publishes the session's state (peer.StateIdle, StateWorking)
// when it changed; a failure is logged.
func (p *Presence) SetState(state string) {
	p.mu.Lock()
	same := p.entry.State == state
	p.entry.State = state
	p.mu.Unlock()
	if same || p.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	if err := p.publish(ctx); err != nil && p.ctx.Err() == nil {
		p.cfg.Log.Warn("session registry: publish state failed", "err", err)
	}
}

// Others lists the other sessions in the registry.
func (p *Presence) Others(ctx context.Context) ([]peer.Entry, error) {
	all, err := p.cfg.Registry.List(ctx)
	if err != nil {
		return nil, err
	}
	me := p.Entry().ID
	out := all[:0]
	for _, e := range all {
		if e.ID != me {
			out = append(out, e)
		}
	}
	return out, nil
}

// Rows are the other sessions as ListAgents shows them: "session" on
// this host, "remote" elsewhere.
func (p *Presence) Rows(ctx context.Context) ([]peertool.Row, error) {
	others, err := p.Others(ctx)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	host := p.Entry().Host
	rows := make([]peertool.Row, 0, len(others))
	for _, e := range others {
		r := peertool.Row{Name: e.Label(), Ref: peer.Short(e.ID), Kind: peertool.KindSession, State: e.State, Folder: e.Folder, To: "session:" + e.ID}
		if e.Host != host {
			r.Kind, r.Folder = peertool.KindRemote, e.Host+":"+e.Folder
		}
		if !e.Peers {
			r.State += " (takes no messages)"
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// SendPeer implements peertool.Peers: addr is "uds:<path>",
// "bridge:<id>" or "session:<id>" (through the registry: the socket on
// this host, else the bridge).
func (p *Presence) SendPeer(ctx context.Context, addr, text, summary string) (string, error) {
	me := p.Entry()
	m := peer.Message{From: me.Label(), Host: me.Host, Session: me.ID, Text: text, Summary: summary, Sent: p.cfg.Now()}
	a := peer.ParseAddress(addr)
	switch a.Scheme {
	case peer.SchemeUDS:
		// Only a registered session's socket: a uds: address is no way to
		// write to any other socket of the machine.
		others, err := p.Others(ctx)
		if err != nil {
			return "", err
		}
		target := filepath.Clean(a.Target)
		if !slices.ContainsFunc(others, func(e peer.Entry) bool {
			return e.Socket != "" && filepath.Clean(e.Socket) == target && e.Host == me.Host
		}) {
			return "", fmt.Errorf("%s is not the socket of a running troupe session; call ListAgents for the sessions there are", a.Target)
		}
		if err := peer.Send(ctx, a.Target, m); err != nil {
			return "", err
		}
		return "Message delivered to the session at " + a.Target + "; it reads it at its next turn boundary", nil
	case peer.SchemeBridge:
		if p.cfg.Bridge == nil {
			return "", fmt.Errorf("%s: bridge addresses need the NATS store (--store nats://...)", addr)
		}
		m.To = a.Target
		if err := p.cfg.Bridge.SendBridge(ctx, a.Target, m); err != nil {
			return "", err
		}
		return "Message delivered over the bridge to session " + a.Target + "; it reads it at its next turn boundary", nil
	case peer.SchemeSession:
		others, err := p.Others(ctx)
		if err != nil {
			return "", err
		}
		for _, e := range others {
			if e.ID != a.Target && !(len(a.Target) >= 8 && strings.HasPrefix(e.ID, a.Target)) {
				continue
			}
			if !e.Peers {
				return "", fmt.Errorf("session %s (%s) takes no messages from other sessions", e.Label(), peer.Short(e.ID))
			}
			m.To = e.ID
			how := "its socket"
			switch {
			case e.Socket != "" && e.Host == me.Host:
				err = peer.Send(ctx, e.Socket, m)
			case p.cfg.Bridge != nil:
				how = "the bridge"
				err = p.cfg.Bridge.SendBridge(ctx, e.ID, m)
			default:
				err = fmt.Errorf("session %s runs on %s; reaching it needs the NATS store", e.Label(), e.Host)
			}
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Message delivered to session %s [%s] through %s; it reads it at its next turn boundary", e.Label(), peer.Short(e.ID), how), nil
		}
		return "", fmt.Errorf("no running session %s; call ListAgents for the sessions there are", a.Target)
	}
	return "", fmt.Errorf("%q is not a session address", addr)
}

// Close removes the entry, closes the socket (removing its file) and the
// bridge subscription, and stops the heartbeat. It is idempotent.
func (p *Presence) Close(ctx context.Context) error {
	var err error
	p.once.Do(func() {
		p.cancel()
		p.wg.Wait()
		if p.stop != nil {
			p.stop()
		}
		if p.server != nil {
			err = p.server.Close()
		}
		if id := p.Entry().ID; id != "" {
			err = errors.Join(err, p.cfg.Registry.Remove(ctx, id))
		}
	})
	return err
}

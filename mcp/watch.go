package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceWatch is one WatchResource call's interest in a resource.
type resourceWatch struct {
	uri  string
	kick chan struct{} // 1-slot: an update came since the last take
}

// resourceUpdated is the client's handler of notifications/resources/updated:
// it kicks the watches of that resource (or of a resource it is part of:
// the spec lets a server report a sub-resource of the one subscribed).
func (s *server) resourceUpdated(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	uri := req.Params.URI
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if uri == w.uri || strings.HasPrefix(uri, strings.TrimSuffix(w.uri, "/")+"/") {
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
	}
}

// ErrNoSubscribe is returned by WatchResource for a server that does not
// offer resource subscriptions.
var ErrNoSubscribe = errors.New("mcp: server does not offer resource subscriptions")

// WatchResource subscribes to the resource uri of the server named name
// (resources/subscribe) and returns a channel that receives once after
// each notifications/resources/updated for it (updates that come faster
// than they are taken count as one), and the function that unsubscribes.
// It fails for an unknown or disconnected server, one whose capabilities
// have no resources.subscribe (ErrNoSubscribe), a streamable HTTP server
// (troupe opens no standalone event stream to one, so its updates could not
// arrive: ErrNoSubscribe too), or a refused subscribe.
// A server restarted after a broken connection is not subscribed again:
// the watch then gets no more updates.
func (m *Manager) WatchResource(ctx context.Context, name, uri string) (<-chan struct{}, func(), error) {
	s := m.server(name)
	if s == nil {
		return nil, nil, fmt.Errorf("no MCP server named %q; servers: %s", name, strings.Join(m.names(), ", "))
	}
	sess, err := s.current()
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	if caps == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, nil, fmt.Errorf("MCP server %q: %w", name, ErrNoSubscribe)
	}
	if s.cfg.Kind() == TypeHTTP {
		// Updates come on the server's standalone event stream, which
		// troupe does not open for streamable HTTP servers (connect).
		return nil, nil, fmt.Errorf("MCP server %q (streamable HTTP): %w: troupe opens no event stream to it for updates", name, ErrNoSubscribe)
	}
	w := &resourceWatch{uri: uri, kick: make(chan struct{}, 1)}
	s.mu.Lock()
	if s.watches == nil {
		s.watches = map[*resourceWatch]bool{}
	}
	s.watches[w] = true
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.watches, w)
		s.mu.Unlock()
	}
	cctx, cancel := context.WithTimeoutCause(ctx, m.opts.CallTimeout, errCallTimeout)
	defer cancel()
	if err := sess.Subscribe(cctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		forget()
		return nil, nil, fmt.Errorf("MCP server %q: subscribe to %s: %w", name, uri, err)
	}
	stop := func() {
		forget()
		s.mu.Lock()
		others := false
		for o := range s.watches {
			others = others || o.uri == uri
		}
		s.mu.Unlock()
		if others {
			return // another watch still wants it
		}
		uctx, cancel := context.WithTimeout(context.Background(), DefaultStopTimeout)
		defer cancel()
		_ = sess.Unsubscribe(uctx, &sdk.UnsubscribeParams{URI: uri}) // a closed session has nothing to undo
	}
	return w.kick, stop, nil
}

// ReadResourceText reads the resource uri of the server named name and
// returns its contents as text (binary parts described in one line).
func (m *Manager) ReadResourceText(ctx context.Context, name, uri string) (string, error) {
	s := m.server(name)
	if s == nil {
		return "", fmt.Errorf("no MCP server named %q; servers: %s", name, strings.Join(m.names(), ", "))
	}
	sess, err := s.current()
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeoutCause(ctx, m.opts.CallTimeout, errCallTimeout)
	defer cancel()
	res, err := sess.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("MCP server %q: read %s: %w", name, uri, err)
	}
	var parts []string
	for _, c := range res.Contents {
		if c.Blob != nil {
			parts = append(parts, fmt.Sprintf("[%s: %s, %d bytes of binary data]", c.URI, c.MIMEType, len(c.Blob)))
			continue
		}
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// server returns the server named name, nil when there is none.
func (m *Manager) server(name string) *server {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

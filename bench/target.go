package bench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/troupe-dev/troupe/mailbox"
	"github.com/troupe-dev/troupe/store/file"
	natsstore "github.com/troupe-dev/troupe/store/nats"
	"github.com/troupe-dev/troupe/tasklist"
	"github.com/troupe-dev/troupe/team"
)

// stores are the stores one run (or one child) works on: the file store
// under a run's folder, or a namespace of its own on a NATS server.
type stores struct {
	teams team.Store
	mail  mailbox.Store
	tasks tasklist.Store
	// where tells children how to open the same stores.
	where childConfig
	close func()
}

// StoreName describes what r benchmarks, for reports: "file" or the
// NATS URL.
func (r *Runner) StoreName() string {
	if r.NATS != "" {
		return r.NATS
	}
	return "file"
}

// openRun opens the stores of a run: the file store at dir, or, when r.NATS
// is set, a fresh namespace on that server (deleted again when the run is
// closed, unless r.Keep).
func (r *Runner) openRun(ctx context.Context, dir string) (stores, error) {
	if r.NATS == "" {
		return openFile(dir)
	}
	b := make([]byte, 5)
	rand.Read(b)
	ns := fmt.Sprintf("bench-%x", b)
	st, err := openNATS(ctx, r.NATS, ns)
	if err != nil {
		return stores{}, err
	}
	s := st.nats
	st.close = func() {
		if r.Keep {
			r.progressf("  kept namespace %s on %s", ns, r.NATS)
			s.Close()
			return
		}
		if err := s.DeleteNamespace(context.WithoutCancel(ctx)); err != nil {
			r.progressf("  %v", err)
		}
	}
	return st.stores, nil
}

func openFile(dir string) (stores, error) {
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		return stores{}, err
	}
	return stores{teams: s.Teams(), mail: s.Mail(), tasks: s.Tasks(), where: childConfig{Root: s.Root()}, close: func() { s.Close() }}, nil
}

type natsStores struct {
	stores
	nats *natsstore.Store
}

func openNATS(ctx context.Context, url, namespace string) (natsStores, error) {
	s, err := natsstore.Open(ctx, url, natsstore.Options{Namespace: namespace})
	if err != nil {
		return natsStores{}, err
	}
	return natsStores{stores: stores{teams: s.Teams(), mail: s.Mail(), tasks: s.Tasks(),
		where: childConfig{NATS: url, Namespace: namespace}, close: func() { s.Close() }}, nats: s}, nil
}

// openChild opens the stores a child's configuration names.
func openChild(ctx context.Context, c childConfig) (stores, error) {
	if c.NATS != "" {
		st, err := openNATS(ctx, c.NATS, c.Namespace)
		return st.stores, err
	}
	return openFile(c.Root)
}

// at returns c with the stores' location filled in.
func (s stores) at(c childConfig) childConfig {
	c.Root, c.NATS, c.Namespace = s.where.Root, s.where.NATS, s.where.Namespace
	return c
}

// inboxIDs reads an inbox through the store: the ids of its messages in
// order ("" for a message without one) and the size of their JSON.
func inboxIDs(ctx context.Context, mail mailbox.Store, teamName, agent string) (InboxFile, error) {
	msgs, err := mail.Read(ctx, teamName, agent, false)
	if err != nil {
		return InboxFile{}, fmt.Errorf("read inbox %s of %s: %w", agent, teamName, err)
	}
	f := InboxFile{IDs: make([]string, len(msgs))}
	for i, m := range msgs {
		f.IDs[i], _ = TextID(m.Text)
	}
	if b, err := json.Marshal(msgs); err == nil {
		f.Bytes = int64(len(b))
	}
	return f, nil
}

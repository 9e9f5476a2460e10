package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/troupe-dev/troupe/store/file"
	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// OpenFileStore opens the file store rooted at home: the default store,
// on-disk compatible with Claude Code's agent teams.
func OpenFileStore(home string) (Stores, error) {
	s, err := file.Open(home, file.Options{})
	if err != nil {
		return Stores{}, err
	}
	return Stores{Teams: s.Teams(), Mail: s.Mail(), Tasks: s.Tasks(), Close: s.Close}, nil
}

// storeFile is the --store value of the file store.
const storeFile = "file"

// StoreFlags select the store: --store and the NATS connection options,
// each with an environment variable for when the flag is absent.
type StoreFlags struct {
	store     string
	token     string
	creds     string
	tlsCA     string
	tlsCert   string
	tlsKey    string
	Namespace string
	replicas  int
}

// add registers the flags as persistent flags of the root.
func (f *StoreFlags) add(pf *pflag.FlagSet) {
	pf.StringVar(&f.store, "store", "", `where teams live: "file" (under --home) or a NATS URL such as nats://host:4222 (default $TROUPE_STORE, else file)`)
	pf.StringVar(&f.token, "nats-token", "", "NATS auth `TOKEN` (default $TROUPE_NATS_TOKEN)")
	pf.StringVar(&f.creds, "nats-creds", "", "NATS credentials `FILE` with a user JWT and nkey seed (default $TROUPE_NATS_CREDS)")
	pf.StringVar(&f.tlsCA, "nats-ca", "", "PEM `FILE` of CAs to verify the NATS server with (default $TROUPE_NATS_CA)")
	pf.StringVar(&f.tlsCert, "nats-cert", "", "client certificate `FILE` for NATS mutual TLS (default $TROUPE_NATS_CERT)")
	pf.StringVar(&f.tlsKey, "nats-key", "", "client key `FILE` for NATS mutual TLS (default $TROUPE_NATS_KEY)")
	pf.StringVar(&f.Namespace, "nats-namespace", "", "prefix of troupe's NATS streams and subjects, to share a server between installations (default $TROUPE_NATS_NAMESPACE, else troupe)")
	pf.IntVar(&f.replicas, "nats-replicas", 0, "give troupe's NATS streams `N` replicas (1-5), changing existing ones (default: 3 on a cluster of 3 or more servers, else 1; existing counts kept)")
}

// StoreSpec is a resolved store selection.
type StoreSpec struct {
	URL     string // empty for the file store
	Options natsstore.Options
}

// StoreSpec resolves the flags against the environment. A --store that is
// neither "file" nor a NATS URL is a usage error.
func (a *App) StoreSpec() (StoreSpec, error) {
	f := a.StoreFlags
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return a.Getenv(env)
	}
	sel, src := f.store, "--store"
	if sel == "" {
		sel, src = a.Getenv("TROUPE_STORE"), "$TROUPE_STORE"
	}
	if sel == "" || sel == storeFile {
		return StoreSpec{}, nil
	}
	for _, one := range strings.Split(sel, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || u.Host == "" {
			return StoreSpec{}, Usagef("%s %q: want %q or a NATS URL such as nats://127.0.0.1:4222", src, sel, storeFile)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return StoreSpec{}, Usagef("%s %q: scheme %q is not a NATS URL (want nats://, tls://, ws:// or wss://) and the value is not %q", src, sel, u.Scheme, storeFile)
		}
	}
	return StoreSpec{URL: sel, Options: natsstore.Options{
		Token:       pick(f.token, "TROUPE_NATS_TOKEN"),
		CredsFile:   pick(f.creds, "TROUPE_NATS_CREDS"),
		TLSCAFile:   pick(f.tlsCA, "TROUPE_NATS_CA"),
		TLSCertFile: pick(f.tlsCert, "TROUPE_NATS_CERT"),
		TLSKeyFile:  pick(f.tlsKey, "TROUPE_NATS_KEY"),
		Namespace:   pick(f.Namespace, "TROUPE_NATS_NAMESPACE"),
		Replicas:    f.replicas,
		Now:         a.Now,
		Logger:      slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}}, nil
}

// OpenStores opens the store the command line selects (--store,
// $TROUPE_STORE): the file store under the resolved home through
// Env.OpenStore, or the NATS store at the given URL. It returns the
// stores and a description of where they are (the folder or the URL) for
// messages. Every command that touches teams, inboxes or task lists opens
// them through here.
func (a *App) OpenStores(ctx context.Context) (Stores, string, error) {
	spec, err := a.StoreSpec()
	if err != nil {
		return Stores{}, "", err
	}
	if spec.URL == "" {
		home, err := a.Home()
		if err != nil {
			return Stores{}, "", err
		}
		if fi, err := os.Stat(home); err == nil && !fi.IsDir() {
			return Stores{}, "", fmt.Errorf("store root %s is not a folder", home)
		}
		st, err := a.OpenStore(home)
		return st, home, err
	}
	s, err := natsstore.Open(ctx, spec.URL, spec.Options)
	if err != nil {
		return Stores{}, "", err
	}
	where := s.URL()
	if spec.Options.Namespace != "" {
		where += " (namespace " + spec.Options.Namespace + ")"
	}
	return Stores{Teams: s.Teams(), Mail: s.Mail(), Tasks: s.Tasks(), Close: s.Close}, where, nil
}

// StoreEnv returns the environment entries (KEY=value) that make a child
// troupe process, such as a spawned teammate, open the same store as this
// one: TROUPE_HOME for the file store, TROUPE_STORE and the NATS options
// otherwise. Secrets travel in the environment, not on a command line
// that other users can list.
func (a *App) StoreEnv() ([]string, error) {
	spec, err := a.StoreSpec()
	if err != nil {
		return nil, err
	}
	if spec.URL == "" {
		home, err := a.Home()
		if err != nil {
			return nil, err
		}
		return []string{"TROUPE_STORE=" + storeFile, "TROUPE_HOME=" + home}, nil
	}
	env := []string{"TROUPE_STORE=" + spec.URL}
	for _, kv := range []struct{ key, value string }{
		{"TROUPE_NATS_TOKEN", spec.Options.Token},
		{"TROUPE_NATS_CREDS", spec.Options.CredsFile},
		{"TROUPE_NATS_CA", spec.Options.TLSCAFile},
		{"TROUPE_NATS_CERT", spec.Options.TLSCertFile},
		{"TROUPE_NATS_KEY", spec.Options.TLSKeyFile},
		{"TROUPE_NATS_NAMESPACE", spec.Options.Namespace},
	} {
		if kv.value != "" {
			env = append(env, kv.key+"="+kv.value)
		}
	}
	return env, nil
}

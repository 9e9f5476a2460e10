package nats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// duplicateWindow is how long the mail stream remembers Nats-Msg-Id
// values: a retried publish within it is stored once.
const duplicateWindow = 2 * time.Minute

// maxValueSize bounds one team file or task, well above what troupe
// writes, below the default server payload limit.
const maxValueSize = 1 << 20

// names of one namespace's streams, buckets and subjects.
func bucketName(ns, what string) string { return ns + "_v" + schemaVersion + "_" + what }

// setup binds the namespace's buckets and mail stream, creating missing
// ones, and checks the configuration of existing ones.
func (s *Store) setup(ctx context.Context) error {
	// Setting up is a handful of requests: they share three request
	// timeouts, and each is asked again when a server busy with an
	// election or a restart (or one just lost) leaves it unanswered.
	ctx, cancel := context.WithTimeout(ctx, 3*s.opts.RequestTimeout)
	defer cancel()
	ask := func(what string, f func(ctx context.Context) error) error {
		return s.retry(ctx, what, s.opts.RequestTimeout/2, func(ctx context.Context, _ int) error { return f(ctx) })
	}
	err := ask("account info", func(ctx context.Context) error {
		_, err := s.js.AccountInfo(ctx)
		return err
	})
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return errors.New("JetStream is not enabled on this server or account (run nats-server with -js, or troupe serve)")
		}
		return fmt.Errorf("JetStream account info: %w", err)
	}
	ns := s.opts.Namespace
	for _, b := range []struct {
		name, desc string
		kv         *jetstream.KeyValue
		str        *jetstream.Stream
	}{
		{bucketName(ns, "teams"), "troupe team files", &s.teams, nil},
		{bucketName(ns, "tasks"), "troupe task lists", &s.tasks, &s.tasksStream},
		{bucketName(ns, "mailread"), "troupe inbox read marks", &s.mailRead, &s.mailReadStream},
	} {
		err := ask("bucket "+b.name, func(ctx context.Context) error {
			kv, str, err := s.bucket(ctx, b.name, b.desc, 1)
			if err == nil {
				*b.kv = kv
				if b.str != nil {
					*b.str = str
				}
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	s.mailStream = bucketName(ns, "mail")
	s.mailSubject = ns + ".v" + schemaVersion + ".mail"
	cfg := jetstream.StreamConfig{
		Name:        s.mailStream,
		Description: "troupe inboxes: one message per delivery",
		Subjects:    []string{s.mailSubject + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    s.replicas,
		Duplicates:  duplicateWindow,
		AllowDirect: true,
		MaxMsgs:     -1,
		MaxBytes:    -1,
		MaxAge:      0,
		Metadata:    map[string]string{schemaKey: schemaVersion},
	}
	return ask("stream "+s.mailStream, func(ctx context.Context) error {
		var err error
		s.mail, err = s.stream(ctx, cfg)
		return err
	})
}

// bucket binds (or creates) the KV bucket name and checks it.
func (s *Store) bucket(ctx context.Context, name, desc string, history uint8) (jetstream.KeyValue, jetstream.Stream, error) {
	kv, err := s.js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = s.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:       name,
			Description:  desc,
			History:      history,
			MaxValueSize: maxValueSize,
			Storage:      jetstream.FileStorage,
			Replicas:     s.replicas,
			Metadata:     map[string]string{schemaKey: schemaVersion},
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			// Another process created it first, maybe differently.
			kv, err = s.js.KeyValue(ctx, name)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("bucket %s: %w", name, replicaHint(err))
	}
	str, err := s.js.Stream(ctx, "KV_"+name)
	if err != nil {
		return nil, nil, fmt.Errorf("bucket %s: %w", name, err)
	}
	if err := checkConfig(str.CachedInfo().Config, "bucket "+name, false); err != nil {
		return nil, nil, err
	}
	if str, err = s.fitReplicas(ctx, str); err != nil {
		return nil, nil, fmt.Errorf("bucket %s: %w", name, err)
	}
	return retryKV{KeyValue: kv, s: s}, s.fitConsumers(ctx, str), nil
}

// stream binds (or creates) the stream of cfg and checks it.
func (s *Store) stream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	str, err := s.js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		str, err = s.js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			str, err = s.js.Stream(ctx, cfg.Name)
		}
	}
	if err != nil {
		if errors.Is(err, natsgo.ErrNoResponders) {
			return nil, fmt.Errorf("stream %s: no JetStream responded: %w", cfg.Name, err)
		}
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, replicaHint(err))
	}
	got := str.CachedInfo().Config
	if err := checkConfig(got, "stream "+cfg.Name, true); err != nil {
		return nil, err
	}
	if !slices.Equal(got.Subjects, cfg.Subjects) {
		return nil, fmt.Errorf("stream %s exists with subjects %q; troupe needs exactly %q (delete the stream or choose another namespace)", cfg.Name, got.Subjects, cfg.Subjects)
	}
	if str, err = s.fitReplicas(ctx, str); err != nil {
		return nil, err
	}
	return s.fitConsumers(ctx, str), nil
}

// checkConfig refuses a stream of another schema or one whose limits
// would lose data the store relies on. what names it in the error.
func checkConfig(c jetstream.StreamConfig, what string, mail bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s exists with an incompatible configuration: %s (delete it or choose another namespace)", what, fmt.Sprintf(format, args...))
	}
	if v := c.Metadata[schemaKey]; v != schemaVersion {
		if v == "" {
			return bad("it has no %s metadata, so it was not made by troupe", schemaKey)
		}
		return bad("schema version %q, this troupe uses %q", v, schemaVersion)
	}
	switch {
	case c.Retention != jetstream.LimitsPolicy:
		return bad("retention %v, want limits", c.Retention)
	case c.MaxAge != 0:
		return bad("max age %v would expire entries", c.MaxAge)
	case c.MaxMsgs > 0 || c.MaxBytes > 0:
		return bad("message or byte limits (%d messages, %d bytes) would drop entries", c.MaxMsgs, c.MaxBytes)
	case c.DenyPurge:
		return bad("purges are denied")
	case mail && c.DenyDelete:
		return bad("message deletes are denied, so read messages could not be pruned")
	case c.Sealed:
		return bad("it is sealed")
	}
	if mail && c.Duplicates <= 0 {
		return bad("no duplicate window, so retried sends could be stored twice")
	}
	return nil
}

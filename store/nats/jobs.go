package nats

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/troupe-dev/troupe/remote"
)

// Defaults for JobOptions.
const (
	DefaultHeartbeatTimeout = 30 * time.Second
	DefaultWorkerTTL        = 15 * time.Second
	// jobsKeep is how long job events and run counts are kept.
	jobsKeep = 7 * 24 * time.Hour
	// jobWatchHeartbeat and jobWatchExpiry are the idle heartbeat and the
	// pull expiry of a job's event watch.
	jobWatchHeartbeat = time.Second
	jobWatchExpiry    = 5 * time.Second
)

// JobOptions tune the job queue and the worker registry of Store.Jobs.
type JobOptions struct {
	// HeartbeatTimeout is how long a taken job may go without a
	// heartbeat (Delivery.InProgress) before it is handed out again.
	// Default 30 s.
	HeartbeatTimeout time.Duration
	// WorkerTTL is how long a worker's registration lasts without a
	// refresh. Default 15 s. It is the workers bucket's TTL: the last
	// process to open the bucket sets it.
	WorkerTTL time.Duration
}

// Jobs is the remote-agent job queue (remote.Queue) and the registry of
// workers (remote.Registry) of one namespace:
//
//	stream troupe_v1_jobs       troupe.v1.jobs                 work queue, one message a job; consumer "workers"
//	stream troupe_v1_jobevents  troupe.v1.jobevents.<job>      the events of each job (kept 7 days)
//	KV     troupe_v1_jobruns    <job>                          runs started (kept 7 days)
//	KV     troupe_v1_workers    <worker>                       registration, expires after WorkerTTL
//
// All workers pull from the one durable consumer, whose ack wait is the
// heartbeat timeout: a job a worker took and stopped beating for goes to
// the next worker that pulls. A job is published with its id as
// Nats-Msg-Id, so a retried Submit is stored once. A job's events begin
// with the lead's EventSubmitted; LastEvent (remote.Recaller) reads the
// newest of them, so a lead started again finds the jobs still held.
type Jobs struct {
	s            *Store
	opts         JobOptions
	jobs, events jetstream.Stream
	cons         jetstream.Consumer
	runs         jetstream.KeyValue
	workers      jetstream.KeyValue
	jobSubject   string
	eventSubject string // prefix, without the trailing dot
}

var (
	_ remote.Queue    = (*Jobs)(nil)
	_ remote.Registry = (*Jobs)(nil)
)

// Jobs binds (or creates) the streams and buckets of remote jobs and
// workers.
func (s *Store) Jobs(ctx context.Context, o JobOptions) (*Jobs, error) {
	if o.HeartbeatTimeout < 0 || o.WorkerTTL < 0 {
		return nil, fmt.Errorf("jobs: negative heartbeat timeout %v or worker TTL %v", o.HeartbeatTimeout, o.WorkerTTL)
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if o.WorkerTTL == 0 {
		o.WorkerTTL = DefaultWorkerTTL
	}
	ctx, cancel, err := s.jobCtx(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	defer cancel()
	ns := s.opts.Namespace
	j := &Jobs{s: s, opts: o, jobSubject: ns + ".v" + schemaVersion + ".jobs", eventSubject: ns + ".v" + schemaVersion + ".jobevents"}
	if j.jobs, err = s.ownStream(ctx, jetstream.StreamConfig{
		Name: bucketName(ns, "jobs"), Description: "troupe remote-agent jobs", Subjects: []string{j.jobSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: duplicateWindow, MaxMsgs: -1, MaxBytes: -1, Metadata: map[string]string{schemaKey: schemaVersion},
	}); err != nil {
		return nil, err
	}
	if j.events, err = s.ownStream(ctx, jetstream.StreamConfig{
		Name: bucketName(ns, "jobevents"), Description: "troupe remote-agent job events", Subjects: []string{j.eventSubject + ".>"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage,
		MaxAge: jobsKeep, MaxMsgs: -1, MaxBytes: -1, Metadata: map[string]string{schemaKey: schemaVersion},
	}); err != nil {
		return nil, err
	}
	if j.cons, err = j.jobs.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "workers", Description: "troupe workers", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: o.HeartbeatTimeout, MaxDeliver: -1, DeliverPolicy: jetstream.DeliverAllPolicy,
	}); err != nil {
		return nil, fmt.Errorf("stream %s: consumer workers: %w", bucketName(ns, "jobs"), err)
	}
	if j.runs, err = s.ttlBucket(ctx, bucketName(ns, "jobruns"), "troupe remote-agent job runs", jobsKeep); err != nil {
		return nil, err
	}
	if j.workers, err = s.ttlBucket(ctx, bucketName(ns, "workers"), "troupe workers", o.WorkerTTL); err != nil {
		return nil, err
	}
	return j, nil
}

// jobCtx is begin for the job queue and the worker registry: a closed
// store is remote.ErrClosed.
func (s *Store) jobCtx(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel, err := s.begin(ctx)
	if err != nil {
		return nil, nil, s.closedAs(err, remote.ErrClosed)
	}
	return ctx, cancel, nil
}

// ownStream binds (or creates) a stream of the jobs layout, whose limits
// differ from the store's own streams, refusing one not made by troupe
// (checkOurs) before the update would reconfigure it.
func (s *Store) ownStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	cur, err := s.checkOurs(ctx, cfg.Name, "stream "+cfg.Name)
	if err != nil {
		return nil, err
	}
	cfg.Replicas = s.replicasFor(cur)
	str, err := s.js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		if errors.Is(err, natsgo.ErrNoResponders) {
			return nil, fmt.Errorf("stream %s: no JetStream responded: %w", cfg.Name, err)
		}
		return nil, fmt.Errorf("stream %s: %w (delete it or choose another namespace)", cfg.Name, replicaHint(err))
	}
	return str, nil
}

// checkOurs refuses an existing stream (what names it) that troupe did not
// make for this schema, before an update would reconfigure it. It returns
// the stream's configuration, or nil when there is no such stream.
func (s *Store) checkOurs(ctx context.Context, stream, what string) (*jetstream.StreamConfig, error) {
	str, err := s.js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cfg := str.CachedInfo().Config
	if v := cfg.Metadata[schemaKey]; v != schemaVersion {
		return nil, fmt.Errorf("%s exists with %s metadata %q, not troupe's schema %q (delete it or choose another namespace)", what, schemaKey, v, schemaVersion)
	}
	return &cfg, nil
}

// ttlBucket binds (or creates) a KV bucket whose entries expire after ttl.
func (s *Store) ttlBucket(ctx context.Context, name, desc string, ttl time.Duration) (jetstream.KeyValue, error) {
	cur, err := s.checkOurs(ctx, "KV_"+name, "bucket "+name)
	if err != nil {
		return nil, err
	}
	kv, err := s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: name, Description: desc, History: 1, TTL: ttl, MaxValueSize: maxValueSize,
		Storage: jetstream.FileStorage, Replicas: s.replicasFor(cur), Metadata: map[string]string{schemaKey: schemaVersion},
	})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", name, replicaHint(err))
	}
	return retryKV{KeyValue: kv, s: s}, nil
}

// Submit implements remote.Queue.
func (j *Jobs) Submit(ctx context.Context, job remote.Job) error {
	if err := job.Validate(); err != nil {
		return err
	}
	b, err := json.Marshal(job)
	if err != nil {
		return err
	}
	if len(b) > maxValueSize {
		return fmt.Errorf("%w: job %s is %d bytes encoded, more than %d", remote.ErrBadJob, job.ID, len(b), maxValueSize)
	}
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return fmt.Errorf("submit job %s: %w", job.ID, err)
	}
	defer cancel()
	// The message id makes a publish retried after a lost acknowledgement
	// store the job once.
	if err := j.s.retry(ctx, "submit job "+job.ID, attemptTimeout, func(ctx context.Context, _ int) error {
		_, err := j.s.js.Publish(ctx, j.jobSubject, b, jetstream.WithMsgID("job."+job.ID))
		return err
	}); err != nil {
		return fmt.Errorf("submit job %s: %w", job.ID, j.s.closedAs(err, remote.ErrClosed))
	}
	return nil
}

// DecodeJob decodes and validates a job as the queue stores it.
func DecodeJob(data []byte) (remote.Job, error) {
	var job remote.Job
	if err := json.Unmarshal(data, &job); err != nil {
		return remote.Job{}, fmt.Errorf("%w: %v", remote.ErrBadJob, err)
	}
	return job, job.Validate()
}

// DecodeEvent decodes an event as the queue stores it; the job id must be
// want.
func DecodeEvent(data []byte, want string) (remote.Event, error) {
	var e remote.Event
	if err := json.Unmarshal(data, &e); err != nil {
		return remote.Event{}, fmt.Errorf("job %s: bad event: %v", want, err)
	}
	switch e.Kind {
	case remote.EventSubmitted, remote.EventStarted, remote.EventProgress, remote.EventRequeued, remote.EventCancel:
	case remote.EventResult:
		if e.Result == nil {
			return remote.Event{}, fmt.Errorf("job %s: result event without a result", want)
		}
	default:
		return remote.Event{}, fmt.Errorf("job %s: event of unknown kind %q", want, e.Kind)
	}
	if e.JobID != want {
		return remote.Event{}, fmt.Errorf("job %s: event of job %q", want, e.JobID)
	}
	return e, nil
}

// Take implements remote.Queue: it pulls from the workers consumer until
// a job comes or ctx ends. A job that cannot be decoded is terminated.
func (j *Jobs) Take(ctx context.Context) (remote.Delivery, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		if j.s.isClosed() {
			return nil, fmt.Errorf("take a job: %w", remote.ErrClosed)
		}
		msg, err := j.cons.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if errors.Is(err, natsgo.ErrTimeout) || errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, context.DeadlineExceeded) {
				continue
			}
			if err = j.s.closedAs(err, remote.ErrClosed); ctx.Err() == nil && !errors.Is(err, remote.ErrClosed) {
				sleepCtx(ctx, time.Second) // a broken connection: do not spin
			}
			return nil, fmt.Errorf("take a job: %w", err)
		}
		if ctx.Err() != nil {
			msg.Nak() // taken as the taker gave up: straight back
			return nil, context.Cause(ctx)
		}
		job, err := DecodeJob(msg.Data())
		if err != nil {
			j.s.log.Warn("dropping an undecodable job", "error", err)
			msg.Term()
			continue
		}
		return &delivery{j: j, msg: msg, job: job}, nil
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Publish implements remote.Queue.
func (j *Jobs) Publish(ctx context.Context, e remote.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	subject := j.eventSubject + "." + token(e.JobID)
	if limit := j.s.nc.MaxPayload(); int64(len(b)+len(subject)+256) > limit {
		return fmt.Errorf("publish %s of job %s: %w: %d bytes, larger than the NATS server at %s accepts (max_payload %d)", e.Kind, e.JobID, remote.ErrTooLarge, len(b), j.s.url, limit)
	}
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return fmt.Errorf("publish %s of job %s: %w", e.Kind, e.JobID, err)
	}
	defer cancel()
	// Retried like a send: the event's hash as its message id stores a
	// publish retried after a lost acknowledgement once (two events differ
	// at least in their time).
	sum := sha256.Sum256(b)
	id := "ev." + hex.EncodeToString(sum[:16])
	if err := j.s.retry(ctx, "publish an event of job "+e.JobID, attemptTimeout, func(ctx context.Context, _ int) error {
		_, err := j.s.js.Publish(ctx, subject, b, jetstream.WithMsgID(id))
		return err
	}); err != nil {
		return fmt.Errorf("publish %s of job %s: %w", e.Kind, e.JobID, j.s.closedAs(err, remote.ErrClosed))
	}
	return nil
}

// Watch implements remote.Queue: an ordered consumer on the job's events,
// from the first; undecodable events are logged and skipped.
func (j *Jobs) Watch(ctx context.Context, jobID string) (<-chan remote.Event, error) {
	rctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch job %s: %w", jobID, err)
	}
	defer cancel()
	cons, err := j.s.orderedConsumer(rctx, j.events, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{j.eventSubject + "." + token(jobID)}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("watch job %s: %w", jobID, j.s.closedAs(err, remote.ErrClosed))
	}
	// A job's watch is short-lived and few run at once, so it takes a
	// fast heartbeat: when the server holding its consumer dies (the
	// client still connected to another), the missing heartbeats reset it
	// in about two seconds instead of the default ten.
	it, err := cons.Messages(jetstream.PullExpiry(jobWatchExpiry), jetstream.PullHeartbeat(jobWatchHeartbeat))
	if err != nil {
		return nil, fmt.Errorf("watch job %s: %w", jobID, j.s.closedAs(err, remote.ErrClosed))
	}
	out := make(chan remote.Event)
	go func() {
		<-ctx.Done()
		it.Stop()
	}()
	go func() {
		defer close(out)
		for {
			msg, err := it.Next()
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					j.s.log.Warn("job events ended", "job", jobID, "error", err)
				}
				return
			}
			e, err := DecodeEvent(msg.Data(), jobID)
			if err != nil {
				j.s.log.Warn("skipping an event", "error", err)
				continue
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// LastEvent implements remote.Recaller: the newest message of the job's
// events subject, remote.ErrUnknownJob when there is none.
func (j *Jobs) LastEvent(ctx context.Context, jobID string) (remote.Event, error) {
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return remote.Event{}, fmt.Errorf("look up job %s: %w", jobID, err)
	}
	defer cancel()
	var msg *jetstream.RawStreamMsg
	err = j.s.retry(ctx, "look up job "+jobID, attemptTimeout, func(ctx context.Context, _ int) error {
		var err error
		msg, err = j.events.GetLastMsgForSubject(ctx, j.eventSubject+"."+token(jobID))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return remote.Event{}, fmt.Errorf("look up job %s: %w", jobID, j.s.closedAs(err, remote.ErrClosed))
	}
	if msg == nil {
		return remote.Event{}, fmt.Errorf("job %s: %w", jobID, remote.ErrUnknownJob)
	}
	return DecodeEvent(msg.Data, jobID)
}

var _ remote.Recaller = (*Jobs)(nil)

// delivery is one job message taken by one worker.
type delivery struct {
	j       *Jobs
	msg     jetstream.Msg
	job     remote.Job
	started bool
}

func (d *delivery) Job() remote.Job { return d.job }

// Start implements remote.Delivery: it counts the run in the runs bucket
// with compare-and-swap.
func (d *delivery) Start(ctx context.Context, worker string) (int, error) {
	n, err := d.addRun(ctx, 1)
	if err == nil {
		d.started = true
	}
	return n, err
}

func (d *delivery) addRun(ctx context.Context, delta int) (int, error) {
	ctx, cancel, err := d.j.s.jobCtx(ctx)
	if err != nil {
		return 0, fmt.Errorf("job %s: count its run: %w", d.job.ID, err)
	}
	defer cancel()
	key := token(d.job.ID)
	for {
		e, err := d.j.runs.Get(ctx, key)
		var n int
		var rev uint64
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return 0, fmt.Errorf("job %s: read its runs: %w", d.job.ID, err)
		default:
			if n, err = strconv.Atoi(string(e.Value())); err != nil {
				return 0, fmt.Errorf("job %s: runs entry %q: %w", d.job.ID, e.Value(), err)
			}
			rev = e.Revision()
		}
		n = max(n+delta, 0)
		v := []byte(strconv.Itoa(n))
		if rev == 0 {
			_, err = d.j.runs.Create(ctx, key, v)
		} else {
			_, err = d.j.runs.Update(ctx, key, v, rev)
		}
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongSequence(err) {
			return 0, fmt.Errorf("job %s: count its run: %w", d.job.ID, err)
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
}

func isWrongSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) // the latter on replicated streams
}

func (d *delivery) InProgress(ctx context.Context) error { return d.msg.InProgress() }

func (d *delivery) Ack(ctx context.Context) error {
	ctx, cancel, err := d.j.s.jobCtx(ctx)
	if err != nil {
		return fmt.Errorf("ack job %s: %w", d.job.ID, err)
	}
	defer cancel()
	return d.msg.DoubleAck(ctx)
}

func (d *delivery) Nak(ctx context.Context, delay time.Duration) error {
	if d.started {
		if _, err := d.addRun(ctx, -1); err != nil {
			return err
		}
		d.started = false
	}
	if delay <= 0 {
		return d.msg.Nak()
	}
	return d.msg.NakWithDelay(delay)
}

func (d *delivery) Term(ctx context.Context) error { return d.msg.Term() }

// Register implements remote.Registry.
func (j *Jobs) Register(ctx context.Context, w remote.WorkerInfo) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return fmt.Errorf("register worker %s: %w", w.Name, err)
	}
	defer cancel()
	if _, err := j.workers.Put(ctx, token(w.Name), b); err != nil {
		return fmt.Errorf("register worker %s: %w", w.Name, j.s.closedAs(err, remote.ErrClosed))
	}
	return nil
}

// Deregister implements remote.Registry.
func (j *Jobs) Deregister(ctx context.Context, name string) error {
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return fmt.Errorf("deregister worker %s: %w", name, err)
	}
	defer cancel()
	if err := j.workers.Purge(ctx, token(name)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("deregister worker %s: %w", name, j.s.closedAs(err, remote.ErrClosed))
	}
	return nil
}

// List implements remote.Registry: the workers whose registration has not
// expired. An entry that cannot be decoded is skipped and logged.
func (j *Jobs) List(ctx context.Context) ([]remote.WorkerInfo, error) {
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	defer cancel()
	var keys []string
	err = j.s.retry(ctx, "list workers", attemptTimeout, func(ctx context.Context, _ int) (err error) {
		keys, err = j.workers.Keys(ctx)
		return err
	})
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", j.s.closedAs(err, remote.ErrClosed))
	}
	var out []remote.WorkerInfo
	for _, k := range keys {
		e, err := j.workers.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("list workers: %s: %w", k, err)
		}
		var w remote.WorkerInfo
		if err := json.Unmarshal(e.Value(), &w); err != nil {
			j.s.log.Warn("skipping a worker entry", "key", k, "error", err)
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

// ConsumerPending returns how many jobs wait in the queue or are held by a
// worker: the queue is empty when it is 0.
func (j *Jobs) ConsumerPending(ctx context.Context) (int, error) {
	ctx, cancel, err := j.s.jobCtx(ctx)
	if err != nil {
		return 0, fmt.Errorf("jobs stream info: %w", err)
	}
	defer cancel()
	info, err := j.jobs.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("jobs stream info: %w", err)
	}
	return int(info.State.Msgs), nil
}

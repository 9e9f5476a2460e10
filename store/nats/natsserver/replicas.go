package natsserver

import (
	"context"
	"time"

	natsstore "github.com/troupe-dev/troupe/store/nats"
)

// ReplicaRetry is how often EnsureReplicas tries again while the cluster
// cannot place the replicas yet.
const ReplicaRetry = time.Second

// EnsureReplicas gives troupe's streams and buckets opts.Replicas replicas
// on the server at url, trying again every ReplicaRetry while the cluster
// cannot place them (servers still joining). Each failed attempt is passed
// to waiting, if not nil. It returns nil once done, or the cause of ctx's
// end.
func EnsureReplicas(ctx context.Context, url string, opts natsstore.Options, waiting func(error)) error {
	for {
		err := SetReplicas(ctx, url, opts)
		if err == nil {
			return nil
		}
		if waiting != nil {
			waiting(err)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(ReplicaRetry):
		}
	}
}

// SetReplicas opens the store (and its remote-job streams) at url with
// opts, which creates or changes every stream and bucket to opts.Replicas.
func SetReplicas(ctx context.Context, url string, opts natsstore.Options) error {
	s, err := natsstore.Open(ctx, url, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Jobs(ctx, natsstore.JobOptions{})
	return err
}

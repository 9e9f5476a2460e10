// Package natsserver runs troupe's embedded NATS server with JetStream on
// disk (troupe serve): a single server, or one member of a JetStream
// cluster whose routes authenticate with the clients' token.
//
// Start validates a Config and returns a running Server or an error; a
// configuration that cannot work is a *ConfigError, whose text names the
// troupe serve flag at fault. EnsureReplicas gives troupe's streams and
// buckets a replica count once the cluster can place them. A Server is
// safe for concurrent use; Stop waits until it has shut down.
package natsserver

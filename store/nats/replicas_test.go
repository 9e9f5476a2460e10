package nats

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestAutoReplicas(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		servers []string
		want    int
	}{
		{"single server", "", []string{"nats://127.0.0.1:4222"}, 1},
		{"no cluster name, three URLs", "", []string{"nats://a:4222", "nats://b:4222", "nats://c:4222"}, 1},
		{"cluster of two", "c", []string{"nats://a:4222", "b:4222"}, 1},
		{"cluster of three", "c", []string{"nats://a:4222", "b:4222", "tls://c"}, 3},
		{"cluster of five", "c", []string{"a", "b", "c", "d", "e"}, 3},
		{"one server under two spellings", "c", []string{"nats://A:4222", "a", "nats://b:4222"}, 1},
		{"same host, three ports", "c", []string{"h:1", "h:2", "h:3"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := autoReplicas(tt.cluster, tt.servers); got != tt.want {
				t.Errorf("autoReplicas(%q, %q) = %d; want %d", tt.cluster, tt.servers, got, tt.want)
			}
		})
	}
}

func TestReplicaHint(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // a part of the message; "" means err unchanged
	}{
		{"not clustered", &jetstream.APIError{ErrorCode: 10074, Description: "replicas > 1 not supported in non-clustered mode"}, "not part of a JetStream cluster"},
		{"too few servers", &jetstream.APIError{ErrorCode: 10005, Description: "no suitable peers for placement"}, "fewer JetStream servers than replicas"},
		{"a server down", &jetstream.APIError{ErrorCode: 10005, Description: "no suitable peers for placement, peer offline"}, "is down or has not reported"},
		{"other API error", &jetstream.APIError{ErrorCode: 10058, Description: "stream name already in use"}, ""},
		{"not an API error", errors.New("timeout"), ""},
	}
	for _, tt := range tests {
		got := replicaHint(tt.err)
		if !errors.Is(got, tt.err) {
			t.Errorf("%s: %v does not wrap %v", tt.name, got, tt.err)
		}
		if tt.want == "" && got != tt.err {
			t.Errorf("%s: replicaHint changed %q to %q", tt.name, tt.err, got)
		}
		if tt.want != "" && !strings.Contains(got.Error(), tt.want) {
			t.Errorf("%s: replicaHint = %q, want it to say %q", tt.name, got, tt.want)
		}
	}
}

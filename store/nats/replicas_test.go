package nats

import "testing"

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

package nats

import (
	"context"
	"errors"
	"fmt"
	"testing"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestTransient: the errors a cluster gives while it elects leaders are
// retried, whichever of nats.go's two APIs returned them; a refusal is not.
func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"jetstream 503", &jetstream.APIError{Code: 503, ErrorCode: jetstream.JSErrCodeJetStreamNotEnabled}, true},
		{"jetstream 408", &jetstream.APIError{Code: 408}, true},
		{"jetstream 400", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{"older API meta leader away", fmt.Errorf("list tasks: %w", &natsgo.APIError{Code: 503, ErrorCode: natsgo.JSErrCodeJetStreamNotAvailable, Description: "JetStream system temporarily unavailable"}), true},
		{"older API 404", &natsgo.APIError{Code: 404, ErrorCode: natsgo.JSErrCodeStreamNotFound}, false},
		{"deadline", context.DeadlineExceeded, true},
		{"connection lost", errConnLost, true},
		{"no responders", natsgo.ErrNoResponders, true},
		{"key exists", jetstream.ErrKeyExists, false},
		{"other", errors.New("bad"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := transient(tt.err); got != tt.want {
				t.Errorf("transient(%v) = %v; want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestIsConflict: a lost compare-and-swap is a conflict whichever code the
// server gives it, the replicated streams' included.
func TestIsConflict(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"key exists", jetstream.ErrKeyExists, true},
		{"wrapped revision mismatch", fmt.Errorf("update: %w", jetstream.ErrKeyRevisionMismatch), true},
		{"wrong last sequence", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, true},
		{"wrong last sequence, replicated", fmt.Errorf("update team: %w", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}), true},
		{"another 400", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeBadRequest}, false},
		{"timeout", context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isConflict(tt.err); got != tt.want {
				t.Errorf("isConflict(%v) = %v; want %v", tt.err, got, tt.want)
			}
		})
	}
}

package openai

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"milliseconds win", map[string]string{"Retry-After": "3", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{"junk", map[string]string{"Retry-After": "soon"}, 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		got, ok := retryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: retryAfter(%v) = %v, %v; want %v, %v", tt.name, tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	m := &Model{retryDelay: 100 * time.Millisecond, maxRetryDelay: time.Second}
	for n, hi := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		hi *= time.Millisecond
		d, ok := m.backoff(n, failure{})
		if !ok || d > hi || d < hi*3/4 {
			t.Errorf("backoff(%d) = %v, %v; want in [%v, %v]", n, d, ok, hi*3/4, hi)
		}
	}
	if d, ok := m.backoff(0, failure{after: 2 * time.Second, hasAfter: true}); ok {
		t.Errorf("backoff with retry-after 2s > max = %v, true; want no retry", d)
	}
	if d, ok := m.backoff(3, failure{after: 0, hasAfter: true}); !ok || d != 0 {
		t.Errorf("backoff with retry-after 0 = %v, %v; want 0, true", d, ok)
	}
}

package cli

import (
	"strings"
	"testing"
)

func TestStoreEnv(t *testing.T) {
	tests := []struct {
		name string
		flag StoreFlags
		env  map[string]string
		want []string
	}{
		{"file by default", StoreFlags{}, map[string]string{"TROUPE_HOME": "/h"}, []string{"TROUPE_STORE=file", "TROUPE_HOME=/h"}},
		{"nats from flags", StoreFlags{store: "nats://h:4222", token: "t", Namespace: "ns"}, nil,
			[]string{"TROUPE_STORE=nats://h:4222", "TROUPE_NATS_TOKEN=t", "TROUPE_NATS_NAMESPACE=ns"}},
		{"flags over environment", StoreFlags{token: "flag"}, map[string]string{"TROUPE_STORE": "tls://h:1", "TROUPE_NATS_TOKEN": "env", "TROUPE_NATS_CA": "/ca.pem"},
			[]string{"TROUPE_STORE=tls://h:1", "TROUPE_NATS_TOKEN=flag", "TROUPE_NATS_CA=/ca.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Env{Getenv: func(k string) string { return tt.env[k] }})
			a.StoreFlags = tt.flag
			got, err := a.StoreEnv()
			if err != nil || strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("StoreEnv() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

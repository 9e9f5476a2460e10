package permission

import "testing"

func TestNamesHost(t *testing.T) {
	rules := func(texts ...string) Policy {
		var p Policy
		for _, s := range texts {
			r, err := ParseRule(s)
			if err != nil {
				t.Fatalf("ParseRule(%q): %v", s, err)
			}
			p.Allow = append(p.Allow, r)
		}
		return p
	}
	tests := []struct {
		name string
		p    Policy
		host string
		want bool
	}{
		{"exact", rules("WebFetch(domain:127.0.0.1)"), "127.0.0.1", true},
		{"case", rules("WebFetch(domain:LocalHost)"), "localhost", true},
		{"ipv6 brackets in rule", rules("WebFetch(domain:[::1])"), "::1", true},
		{"ipv6 brackets in host", rules("WebFetch(domain:::1)"), "[::1]", true},
		{"other host", rules("WebFetch(domain:example.com)"), "127.0.0.1", false},
		{"wildcard never names", rules("WebFetch(domain:*.internal)"), "db.internal", false},
		{"bare WebFetch rule", rules("WebFetch"), "127.0.0.1", false},
		{"other tool", rules("Read"), "127.0.0.1", false},
		{"empty host", rules("WebFetch(domain:x)"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.NamesHost(tt.host); got != tt.want {
				t.Errorf("NamesHost(%q) = %v; want %v", tt.host, got, tt.want)
			}
		})
	}
}

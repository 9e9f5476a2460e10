package permission

import "strings"

// NamesHost reports whether an allow rule of p names host exactly, as
// WebFetch(domain:HOST) with no wildcard. WebFetch (tool/webtool) reaches
// a loopback, private or link-local address only for a host so named (or
// for the address itself so named): a wildcard rule such as
// WebFetch(domain:*.example.com) allows fetching but never opens the
// private network. Hosts compare case-insensitively; an IPv6 address
// matches with or without brackets. NamesHost does no I/O.
func (p Policy) NamesHost(host string) bool {
	host = bareHost(host)
	if host == "" {
		return false
	}
	for _, r := range p.Allow {
		if r.Tool != "WebFetch" {
			continue
		}
		d, ok := strings.CutPrefix(r.Specifier, "domain:")
		if ok && bareHost(d) == host {
			return true
		}
	}
	return false
}

// bareHost is host lower-cased without the brackets of an IPv6 literal.
func bareHost(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return host
}

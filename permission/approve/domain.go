package approve

// NamesHost reports whether an allow rule of a's policy names host
// exactly (permission.Policy.NamesHost): WebFetch (tool/webtool) reaches
// a private address of such a host only. A nil Approver names nothing.
func (a *Approver) NamesHost(host string) bool {
	return a != nil && a.Policy.NamesHost(host)
}

package main

// benchStore resolves the store the bench commands measure from --store
// and $TROUPE_STORE: "" for the file store, else the NATS URL. Each run
// works in a namespace of its own on that server, so a --nats-namespace is
// refused rather than ignored, and so are credentials and TLS files, which
// the bench's child processes are not given yet: a benchmark never
// silently measures another store than the one asked for.
func (a *app) benchStore() (string, error) {
	spec, err := a.storeSpec()
	if err != nil || spec.url == "" {
		return "", err
	}
	o := spec.opts
	switch {
	case o.Token != "" || o.CredsFile != "" || o.User != "" || o.Password != "":
		return "", usagef("bench on NATS (%s): credentials are not passed to the benchmark's processes yet; run it against a server that needs none", spec.url)
	case o.TLSCAFile != "" || o.TLSCertFile != "" || o.TLSKeyFile != "":
		return "", usagef("bench on NATS (%s): TLS files are not passed to the benchmark's processes yet; run it against a plain nats:// server", spec.url)
	case o.Namespace != "":
		return "", usagef("bench on NATS (%s): every run makes and deletes a namespace of its own; drop the namespace %q", spec.url, o.Namespace)
	}
	return spec.url, nil
}

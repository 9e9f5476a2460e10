package main

import "github.com/troupe-dev/troupe/internal/bench"

// benchStore resolves the store the bench commands measure from --store
// and $TROUPE_STORE: "" for the file store, else the NATS URL, whose
// options the bench must be able to honour (bench.CheckNATS).
func (a *app) benchStore() (string, error) {
	spec, err := a.storeSpec()
	if err != nil || spec.url == "" {
		return "", err
	}
	if err := bench.CheckNATS(spec.url, spec.opts); err != nil {
		return "", usagef("%v", err)
	}
	return spec.url, nil
}

package benchcmd

import (
	"github.com/troupe-dev/troupe/bench"
	"github.com/troupe-dev/troupe/cli"
)

// benchStore resolves the store the bench commands measure from --store
// and $TROUPE_STORE: "" for the file store, else the NATS URL, whose
// options the bench must be able to honour (bench.CheckNATS).
func (a *app) benchStore() (string, error) {
	spec, err := a.StoreSpec()
	if err != nil || spec.URL == "" {
		return "", err
	}
	if err := bench.CheckNATS(spec.URL, spec.Options); err != nil {
		return "", cli.Usagef("%v", err)
	}
	return spec.URL, nil
}

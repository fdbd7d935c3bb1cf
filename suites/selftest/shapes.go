package selftest

import (
	"time"

	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// shape is a way the reference API can be started unlike its default, with the example target
// file that describes it: the checks must hold on APIs shaped unlike the reference.
type shape struct {
	name      string
	doc       []byte
	configure func(*reference.Config)
}

// shapes are the reference API's other shapes; the correct API passes every property that
// applies to each, on every store.
var shapes = []shape{
	{"uuid-keys", examples.ReferenceUUID, func(c *reference.Config) { c.KeyFormat = reference.KeyFormatUUID }},
	{"no-auth", examples.ReferenceNoAuth, func(c *reference.Config) { c.Auth = reference.AuthNone }},
	{"hooks", examples.ReferenceHooks, func(c *reference.Config) { c.Hooks, c.Downstream = true, "" }},
	{"mismatch-400", examples.ReferenceMismatch400, func(c *reference.Config) { c.MismatchStatus = 400 }},
}

// shapeNamed returns the shape of that name, or nil.
func shapeNamed(name string) *shape {
	for i := range shapes {
		if shapes[i].name == name {
			return &shapes[i]
		}
	}
	return nil
}

// cellOf says how a row's cell starts the reference: most mutants as reference.yaml describes it;
// the error mutants with the test hooks and no downstream (the path a third-party API offers);
// forgets-early with a long declared
// retention that the run cannot wait out, so that only expiry's lower bound can catch it.
func cellOf(r row) cell {
	switch r.mutant {
	case reference.MutantStuckAfterError, reference.MutantErrorReplayDiffers:
		// Keys outlive the wait for a stuck key (the lock timeout and a margin), or an expired
		// key would hide it.
		return cell{shape: shapeNamed("hooks"), retention: time.Minute}
	case reference.MutantForgetsEarly:
		return cell{retention: 24 * time.Hour, maxWait: 6 * time.Second}
	}
	return cell{}
}

package framework

import "context"

// What the external tests of the package read of its internals.

// ArrivalHeader is the header a last-byte burst's answers carry the arrival time in.
const ArrivalHeader = arrivalHeader

// RaceModeOf is how the environment releases same-key bursts.
func RaceModeOf(e *Env) string { return e.raceMode() }

// RawRequest is the wire form of one attempt of a last-byte burst.
type RawRequest struct {
	Wire []byte
	Body []byte
}

// PrepareRaw renders attempt i of a burst of op as its wire form.
func PrepareRaw(s *S, ctx context.Context, op *Op, i int) (RawRequest, error) {
	rc, err := s.prepareRaw(ctx, op, Send{Instance: i})
	if err != nil {
		return RawRequest{}, err
	}
	return RawRequest{Wire: rc.wire, Body: rc.a.ReqBody}, nil
}

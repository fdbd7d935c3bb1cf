package framework_test

import (
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// TestDoRaw: a key with a control character, which net/http refuses to send, goes out through
// the harness's raw writer and is recorded like any attempt; Go's server refuses it with 400.
func TestDoRaw(t *testing.T) {
	s := frameworktest.RefEnv(t, reference.MutantNone, 1, framework.Settings{})
	op := s.NewOp(s.Target.Operations[0])
	op = op.WithKey(op.Key + "\x01x")
	send := framework.Send{Instance: 0, Key: targets.KeyMode{Form: targets.KeyBare}}
	if a := op.Do(send); a.Outcome != history.Failed || !strings.Contains(a.Err, "invalid header field value") {
		t.Fatalf("net/http sent it: %+v", a)
	}
	a := op.DoRaw(send)
	if a.Outcome != history.OK || a.Status != 400 || a.Seq == 0 || !strings.Contains(a.Note, "sent raw") ||
		a.ReqHeader.Get("Idempotency-Key") != op.Key {
		t.Errorf("raw attempt: outcome %s status %d seq %d note %q key %q", a.Outcome, a.Status, a.Seq, a.Note, a.ReqHeader.Get("Idempotency-Key"))
	}
	// An ordinary key sent raw is processed as sent by net/http.
	plain := s.NewOp(s.Target.Operations[0])
	if a := plain.DoRaw(send); a.Outcome != history.OK || a.Status != 201 {
		t.Errorf("plain key sent raw: %s %d %s", a.Outcome, a.Status, a.Err)
	}
}

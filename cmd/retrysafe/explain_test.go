package main

import (
	"testing"

	"github.com/retrysafe/retrysafe/reports"
)

func TestExplainEveryKind(t *testing.T) {
	for _, k := range reports.Kinds {
		res := execCLI(t, "explain", string(k))
		if res.code != exitOK {
			t.Errorf("explain %s: exit %d:\n%s", k, res.code, res.out)
			continue
		}
		mustContain(t, "explain "+string(k), res.out, string(k)+" (anomaly kind", "Common causes in real implementations:", "Confirm by hand:")
	}
	res := execCLI(t, "explain", "race")
	if res.code != exitOK {
		t.Fatalf("explain race: exit %d:\n%s", res.code, res.out)
	}
	mustContain(t, "explain race", res.out, "race (property, side api", "MUST:", "loser-500: the loser of a concurrent claim",
		"--label-filter property:race")
	res = execCLI(t, "explain", "dupliate-record")
	if res.code != exitUsage {
		t.Errorf("explain of an unknown name: exit %d, want %d", res.code, exitUsage)
	}
	mustContain(t, "explain dupliate-record", res.out, `"dupliate-record" is neither an anomaly kind nor a property (nearest: duplicate-record,`)
	res = execCLI(t, "explain")
	mustContain(t, "explain", res.out, "* duplicate-record", "crash-after-claim")
}

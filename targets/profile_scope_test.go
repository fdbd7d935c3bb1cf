package targets

import (
	"slices"
	"strings"
	"testing"
)

func TestOperationScope(t *testing.T) {
	two := minimal + "  - name: other\n    path: /q\n"
	cases := []struct {
		name, src string
		scope     OperationScope
		reuse     string
		warnings  []string
		problem   string
	}{
		{name: "default: per-operation, 4xx", src: two, scope: ScopePerOperation, reuse: "4xx"},
		{name: "stripe base keeps the default", src: two + "profile: stripe\n", scope: ScopePerOperation, reuse: "4xx"},
		{name: "shared", src: two + "profile: {operation_scope: shared}\n", scope: ScopeShared, reuse: "4xx"},
		{name: "shared with a status", src: two + "profile: {operation_scope: shared, operation_reuse_status: [400, 409]}\n",
			scope: ScopeShared, reuse: "[400, 409]"},
		{name: "shared on one operation warns", src: minimal + "profile:\n  operation_scope: shared\n", scope: ScopeShared, reuse: "4xx",
			warnings: []string{"6: profile.operation_scope: shared, but the file declares one operation: nothing to check (the scope spec needs two)"}},
		{name: "a reuse status without shared warns", src: two + "profile: {operation_reuse_status: 409}\n", scope: ScopePerOperation, reuse: "409",
			warnings: []string{"7: profile.operation_reuse_status: is used only with operation_scope: shared (a key reused on another operation is refused); with per-operation it checks nothing"}},
		{name: "a 5xx reuse status warns", src: two + "profile: {operation_scope: shared, operation_reuse_status: 503}\n", scope: ScopeShared, reuse: "503",
			warnings: []string{"7: profile.operation_reuse_status: declares a 5xx for a key reused on another operation: retrysafe reports any 5xx there as a server-error anomaly all the same"}},
		{name: "an unknown scope", src: two + "profile: {operation_scope: global}\n",
			problem: `t.yaml:7: profile.operation_scope: must be per-operation or shared, got "global"`},
		{name: "a bad status", src: two + "profile: {operation_scope: shared, operation_reuse_status: refused}\n",
			problem: `t.yaml:7: profile.operation_reuse_status: must be a status code from 100 to 599 or a class such as 4xx, got "refused"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, probs := parseString(c.src, nil)
			if c.problem != "" {
				if len(probs) != 1 || !strings.HasPrefix(probs[0], c.problem) {
					t.Fatalf("problems = %q, want %q", probs, c.problem)
				}
				return
			}
			if probs != nil {
				t.Fatalf("problems: %v", probs)
			}
			if tg.Profile.OperationScope != c.scope || tg.Profile.OperationReuseStatus.String() != c.reuse {
				t.Errorf("scope %s, reuse %s; want %s, %s", tg.Profile.OperationScope, tg.Profile.OperationReuseStatus, c.scope, c.reuse)
			}
			if got := warningsOf(tg.Warnings); !slices.Equal(got, c.warnings) {
				t.Errorf("warnings\n got: %q\nwant: %q", got, c.warnings)
			}
		})
	}
}

package selftest

import (
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
)

// ManagedClient describes the reference client (`retrysafe client`, binary), as mutant ("" =
// the correct client), through the embedded client-managed.yaml: the harness starts it once per
// scenario against its scripted API.
func ManagedClient(binary, mutant string) (*targets.Target, error) {
	if mutant == "" {
		mutant = "none"
	}
	vars := map[string]string{"RETRYSAFE_BIN": binary, "RETRYSAFE_MUTANT": mutant}
	return targets.Parse("client-managed.yaml (embedded)", examples.ClientManaged, varsThenEnv(vars))
}

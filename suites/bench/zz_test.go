package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets/reference"
)

func TestZZLoadOnly(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	s, _ := startServer(context.Background(), "memory", reference.MutantNone, 0, "")
	defer s.close()
	if os.Getenv("ZZBARE") != "" {
		smp := measure(func() int { return bareAttack(s, 18, 3*time.Second, 1) })
		t.Logf("bare %.0f/s cpu %s", rateOf(smp), us(cpuOf(smp)))
		return
	}
	env := s.env(suites.Settings{LoadWorkers: 16})
	smp := measure(func() int { return env.LoadAttack(0, 3*time.Second).Attempts() })
	t.Logf("load %.0f/s cpu %s", rateOf(smp), us(cpuOf(smp)))
}

package chain_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/suites/framework/frameworktest"
	"github.com/retrysafe/retrysafe/suites/selftest"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
)

// These tests start the reference chain (the reference client, the reference API with its
// outbox on SQLite, RabbitMQ, NATS JetStream or webhooks passed on by the harness's receiver, the
// reference consumer on SQLite) as processes: they need RabbitMQ and NATS JetStream on 127.0.0.1
// (the webhook chain needs no broker).

var (
	binOnce sync.Once
	bin     string
)

// binary is the retrysafe binary every part starts, built once ($RETRYSAFE_BIN when set).
func binary(t *testing.T) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "retrysafe-chain-test-")
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "retrysafe")
		if src := os.Getenv(frameworktest.EnvBinary); src != "" {
			bin = src
		} else if out, err := buildCmd(bin).CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/retrysafe: %v\n%s", err, out)
		}
	})
	if bin == "" {
		t.Fatal("no retrysafe binary")
	}
	return bin
}

// chainTarget describes the reference chain on transport with the parts' mutants; at the end of
// the test it checks that nothing of the chain's topology is left on the broker.
func chainTarget(t *testing.T, transport string, cs selftest.ChainSpec) *targets.Target {
	t.Helper()
	cs.Transport, cs.Binary, cs.Dir = transport, binary(t), t.TempDir()
	cs.Names = "test-" + strings.ReplaceAll(t.Name(), "/", "-")
	tg, err := selftest.ManagedChain(cs)
	if err != nil {
		t.Fatalf("describe the reference chain: %v", err)
	}
	t.Cleanup(func() {
		tg.Close()
		if transport == "webhook" {
			return // nothing on a broker
		}
		inv, err := broker.TakeInventory(context.Background(), broker.WithKinds(broker.Kind(transport)))
		if err != nil {
			t.Errorf("inventory after the test: %v", err)
		} else if left := inv.WithPrefix(broker.DefaultNamePrefix + "-" + cs.Names); !left.Empty() {
			t.Errorf("the chain left its topology on the broker: %s", left)
		}
	})
	return tg
}

// openChain opens the harness of the reference chain on transport with the parts' mutants.
func openChain(t *testing.T, transport string, cs selftest.ChainSpec) *framework.Harness {
	t.Helper()
	tg := chainTarget(t, transport, cs)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := framework.Open(ctx, tg, framework.WithSettings(framework.Settings{Seed: 7}))
	if err != nil {
		t.Fatalf("open the reference chain (these tests need RabbitMQ and NATS JetStream on 127.0.0.1): %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h
}

// runChain runs the chain's one spec.
func runChain(t *testing.T, h *framework.Harness) *framework.Outcome {
	t.Helper()
	for _, sp := range h.Env().Specs() {
		if sp.Property.Name == "chain" {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			return h.Env().RunSpec(ctx, sp)
		}
	}
	t.Fatal("the chain target yields no chain spec")
	return nil
}

// TestChainCatches: each part's mutant breaks the chain at its own hop, with the anomaly the
// chain names it by. On webhooks the consumer's no-dedupe applies the API's delivery again after
// its answer was lost (chain-duplicate-effect at the consumer), and the API's dual-write loses
// the event its cut link to the receiver dropped, and the one whose answer the consumer's hop
// silenced, never delivered again (chain-lost-effect at api→broker, the API's link to the
// harness's receiver); there each mutant breaks the chain at its own hop only (onlyHop).
func TestChainCatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		transport, name string
		cs              selftest.ChainSpec
		kind            reports.Kind
		hop             string
		onlyHop         bool
	}{
		{"amqp", "client new-key-per-retry", selftest.ChainSpec{ClientMutant: "new-key-per-retry"}, reports.KindChainDuplicateEffect, check.HopClient, false},
		{"amqp", "api dual-write", selftest.ChainSpec{APIMutant: "dual-write"}, reports.KindChainLostEffect, check.HopAPIBroker, false},
		{"amqp", "consumer no-dedupe", selftest.ChainSpec{ConsumerMutant: "no-dedupe"}, reports.KindChainDuplicateEffect, check.HopConsumer, false},
		{"webhook", "consumer no-dedupe", selftest.ChainSpec{ConsumerMutant: "no-dedupe"}, reports.KindChainDuplicateEffect, check.HopConsumer, true},
		{"webhook", "api dual-write", selftest.ChainSpec{APIMutant: "dual-write"}, reports.KindChainLostEffect, check.HopAPIBroker, true},
	}
	for _, tc := range cases {
		t.Run(tc.transport+" "+tc.name, func(t *testing.T) {
			t.Parallel()
			out := runChain(t, openChain(t, tc.transport, tc.cs))
			t.Logf("%s in %v: %s\n%s", out.Verdict(), out.Duration.Round(time.Millisecond), out.Message(), notes(out))
			if out.Verdict() != reports.Fail || !hasAnomaly(out.Result, tc.kind, tc.hop) {
				t.Errorf("%s: %s, want fail with %s at hop %s:\n%s\n%s", tc.name, out.Verdict(), tc.kind, tc.hop, out.Message(), notes(out))
			}
			for _, a := range out.Result.Anomalies {
				if tc.onlyHop && a.Hop != tc.hop {
					t.Errorf("%s: an anomaly at hop %s, want every one at %s: %s", tc.name, a.Hop, tc.hop, a.Message)
				}
			}
		})
	}
}

// TestChainCorrect: the correct chain passes under a fault on every hop, on both brokers and on
// webhooks, through
// the driver of suites.RunT (the chain's spec a subtest, a failing or unknown verdict a test
// error), with a fault of every kind on its timeline.
func TestChainCorrect(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"amqp", "nats", "webhook"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			tg := chainTarget(t, transport, selftest.ChainSpec{})
			run := framework.RunTarget(t, tg, framework.WithSettings(framework.Settings{Seed: 7}), framework.Select("side:chain", ""))
			if run == nil || len(run.Properties) != 1 || run.Properties[0].Name != "chain" || run.Properties[0].Verdict != reports.Pass {
				t.Fatalf("the correct chain on %s: %+v, want the chain property alone, passed", transport, run)
			}
			kinds := map[string]int{}
			for _, ev := range run.Faults {
				if ev.Action == "inject" {
					kinds[ev.Kind]++
				}
			}
			for _, k := range []string{"cut-response", "hold-publish", "kill", "cut-broker-link", "timeout"} {
				if kinds[k] == 0 {
					t.Errorf("no %s fault on the chain's timeline (%v)", k, kinds)
				}
			}
		})
	}
}

// TestChainRunT: a team proves its own three services from go test with a chain target file
// (targets/examples/chain-amqp.yaml: each part an ordinary target file with variables of its
// own), through suites.RunT; a failing or unknown verdict would be a test error. Not parallel:
// it sets the file's variables in the process's environment.
func TestChainRunT(t *testing.T) {
	name := broker.UniqueName("test-runt")
	for k, v := range map[string]string{
		frameworktest.EnvBinary: binary(t), "RETRYSAFE_REUSE_PORT": "true", "RETRYSAFE_CHAIN_DIR": t.TempDir(), "RETRYSAFE_CHAIN_NAME": name,
		"RETRYSAFE_CHAIN_API_URL": frameworktest.ReservedURLs(t, 1), "RETRYSAFE_CHAIN_CONSUMER_URL": frameworktest.ReservedURLs(t, 2),
	} {
		t.Setenv(k, v)
	}
	run := suites.RunT(t, "../../targets/examples/chain-amqp.yaml", suites.Select("side:chain", ""),
		suites.WithSettings(suites.Settings{Seed: 3}))
	if run == nil || len(run.Properties) != 1 || run.Properties[0].Verdict != reports.Pass {
		t.Errorf("RunT on chain-amqp.yaml: %+v, want the chain property, passed", run)
	}
	inv, err := broker.TakeInventory(context.Background(), broker.WithKinds(broker.AMQP))
	if err != nil {
		t.Errorf("inventory after the test: %v", err)
	} else if left := inv.WithPrefix(name); !left.Empty() {
		t.Errorf("the chain left its topology on the broker: %s", left)
	}
}

// hasAnomaly reports whether r has an anomaly of kind at hop.
func hasAnomaly(r check.Result, kind reports.Kind, hop string) bool {
	for _, a := range r.Anomalies {
		if a.Kind == kind && a.Hop == hop {
			return true
		}
	}
	return false
}

// notes is an outcome's evidence, for a failure message.
func notes(o *framework.Outcome) string {
	if o.Evidence == nil {
		return ""
	}
	return fmt.Sprint(o.Evidence.Message)
}

// buildCmd builds the retrysafe binary into dst.
func buildCmd(dst string) *exec.Cmd {
	return exec.Command("go", "build", "-o", dst, "github.com/retrysafe/retrysafe/cmd/retrysafe")
}

package faults

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// envOf asks instance i what EFFECT_DELAY_MS its process was started with.
func envOf(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url + "/env")
	if err != nil {
		return "down: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// EnvFault restarts every instance with the environment, keeps it across a kill and a restart,
// and its heal restarts them without it.
func TestClusterEnvFault(t *testing.T) {
	tg, c, _, ctx := startClusterT(t, 2)
	before := c.Pids()
	f := c.EnvFault([]string{"EFFECT_DELAY_MS=250"})
	if kind, target := KindOf(f); kind != KindRestartEnv || target != "every instance" {
		t.Errorf("KindOf = %s, %s; want %s, every instance", kind, target, KindRestartEnv)
	}
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	during := c.Pids()
	for i, in := range tg.Instances {
		if got := envOf(t, in.URL.String()); got != "250" {
			t.Errorf("instance %d: EFFECT_DELAY_MS = %q, want 250", i, got)
		}
		if during[i] == before[i] || alive(before[i]) {
			t.Errorf("instance %d: pid %d, before %d (alive %v): want a new process", i, during[i], before[i], alive(before[i]))
		}
	}
	c.Kill(0)
	if err := c.Start(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := envOf(t, tg.Instances[0].URL.String()); got != "250" {
		t.Errorf("after a kill and a restart: EFFECT_DELAY_MS = %q, want 250", got)
	}
	for range 2 { // the heal is idempotent
		if err := f.Heal(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, in := range tg.Instances {
		if got := envOf(t, in.URL.String()); got != "" {
			t.Errorf("healed, instance %d: EFFECT_DELAY_MS = %q, want none", i, got)
		}
	}
	if c.Env() != nil {
		t.Errorf("Env() = %v after the heal, want none", c.Env())
	}
}

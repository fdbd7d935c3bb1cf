package faults

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// envStopGrace bounds how long an instance restarted with another environment may take to exit
// after SIGTERM before it is killed.
const envStopGrace = 5 * time.Second

// EnvFault returns the fault that restarts every instance with the extra environment env
// ("NAME=value" entries, such as the delay a worker reads from EFFECT_DELAY_MS); healing restarts
// them without it. Each restart stops the instance with SIGTERM (SIGKILL after a grace), starts
// it on its address and waits until it is ready; instances killed meanwhile start with the
// environment in force.
func (c *Cluster) EnvFault(env []string) Fault {
	label := "restart every instance with " + strings.Join(env, " ")
	return Func(KindRestartEnv, "every instance", label,
		func(ctx context.Context) error { return c.restartWith(ctx, slices.Clone(env)) },
		func(ctx context.Context) error {
			c.mu.Lock()
			set := len(c.env) > 0
			c.mu.Unlock()
			if !set {
				return nil
			}
			return c.restartWith(ctx, nil)
		})
}

// restartWith sets the extra environment and restarts every instance with it.
func (c *Cluster) restartWith(ctx context.Context, env []string) error {
	c.mu.Lock()
	c.env = env
	c.mu.Unlock()
	var errs []error
	for i := range c.running {
		c.mu.Lock()
		p := c.running[i]
		c.running[i] = nil
		c.mu.Unlock()
		if p != nil {
			p.Stop(envStopGrace)
		}
		errs = append(errs, c.Start(ctx, i))
	}
	return errors.Join(errs...)
}

// Env returns the extra environment the instances run with (EnvFault), nil when none.
func (c *Cluster) Env() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.env)
}

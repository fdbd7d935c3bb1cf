package faults

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// Cluster runs the instances of a target that has a lifecycle: one process per declared
// instance, each listening on its instance's address, so that a killed instance can be
// restarted on the same address and store.
type Cluster struct {
	t     *targets.Target
	procs *Processes
	vars  targets.LifecycleVars

	mu      sync.Mutex
	running []*Process // by instance index; nil when stopped
	kills   int
}

// DefaultReadyTimeout bounds how long an instance may take to become ready when the target
// file gives no readiness probe timeout.
const DefaultReadyTimeout = 30 * time.Second

// StartCluster starts every instance of t and waits until each is ready. vars fill
// {{.Downstream}}, {{.Storage}} and {{.Broker}} ({{.Addr}} is each instance's).
func StartCluster(ctx context.Context, t *targets.Target, procs *Processes, vars targets.LifecycleVars) (*Cluster, error) {
	if t.Lifecycle == nil {
		return nil, fmt.Errorf("target %s has no lifecycle", t.Name)
	}
	c := &Cluster{t: t, procs: procs, running: make([]*Process, len(t.Instances))}
	c.vars = vars
	for i := range t.Instances {
		if err := c.Start(ctx, i); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Start starts instance i (again) on its address and waits until it is ready.
func (c *Cluster) Start(ctx context.Context, i int) error {
	in := &c.t.Instances[i]
	vars := c.vars
	vars.Addr = in.Addr()
	argv, env, err := c.t.Lifecycle.Render(vars)
	if err != nil {
		return err
	}
	p, err := c.procs.StartIn(fmt.Sprintf("%s instance %d", c.t.Name, i), argv, env, c.t.Lifecycle.Dir)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.running[i] = p
	c.mu.Unlock()
	if err := c.waitReady(ctx, i, p); err != nil {
		p.Kill()
		return err
	}
	return nil
}

// waitReady polls the readiness probe (or the port) until it answers or the process dies.
func (c *Cluster) waitReady(ctx context.Context, i int, p *Process) error {
	in := &c.t.Instances[i]
	timeout, path := DefaultReadyTimeout, ""
	if r := c.t.Lifecycle.Ready; r != nil {
		timeout, path = r.Timeout, r.Path
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: c.t.TLSConfig()}}
	defer hc.CloseIdleConnections()
	for {
		if ready(ctx, hc, in, path) {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("%s exited before it was ready: %s", p.Name, p.Output())
		case <-ctx.Done():
			return fmt.Errorf("%s was not ready at %s within %v: %s", p.Name, in.URL.Redacted(), timeout, p.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ready probes an instance once: a 2xx on path, or an accepted connection when path is "".
func ready(ctx context.Context, hc *http.Client, in *targets.Instance, path string) bool {
	if path == "" {
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp", in.Addr())
		if err == nil {
			conn.Close()
		}
		return err == nil
	}
	u, err := in.Resolve(path)
	if err != nil {
		return false
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// Kill SIGKILLs instance i and waits until it is reaped.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	p := c.running[i]
	c.running[i] = nil
	c.kills++
	c.mu.Unlock()
	if p != nil {
		p.Kill()
	}
}

// KillFault returns the fault that SIGKILLs instance i (and waits until it is reaped); healing
// starts it again on its address and waits until it is ready (a running instance is left alone).
func (c *Cluster) KillFault(i int) Fault {
	return Func(KindKill, fmt.Sprintf("instance %d", i), fmt.Sprintf("SIGKILL instance %d (healed by a restart)", i),
		func(context.Context) error { c.Kill(i); return nil },
		func(ctx context.Context) error {
			if c.Running(i) {
				return nil
			}
			return c.Start(ctx, i)
		})
}

// PauseFault returns the fault that stops instance i with SIGSTOP; healing continues it.
func (c *Cluster) PauseFault(i int) Fault {
	return Func(KindPause, fmt.Sprintf("instance %d", i), fmt.Sprintf("SIGSTOP instance %d", i),
		func(context.Context) error { return c.Pause(i) },
		func(context.Context) error {
			if !c.Running(i) {
				return nil
			}
			return c.Resume(i)
		})
}

// Running reports whether instance i is running (started and not killed).
func (c *Cluster) Running(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running[i] != nil
}

// Pause stops instance i with SIGSTOP; Resume continues it.
func (c *Cluster) Pause(i int) error { return c.signal(i, syscall.SIGSTOP) }

// Resume continues a paused instance with SIGCONT.
func (c *Cluster) Resume(i int) error { return c.signal(i, syscall.SIGCONT) }

func (c *Cluster) signal(i int, sig syscall.Signal) error {
	c.mu.Lock()
	p := c.running[i]
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("instance %d is not running", i)
	}
	return p.Signal(sig)
}

// Kills returns how many times an instance was killed.
func (c *Cluster) Kills() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kills
}

// Size is the number of instances.
func (c *Cluster) Size() int { return len(c.running) }

// Pids returns the process ids of the running instances (0 for a stopped one).
func (c *Cluster) Pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make([]int, len(c.running))
	for i, p := range c.running {
		if p != nil {
			pids[i] = p.Pid()
		}
	}
	return pids
}

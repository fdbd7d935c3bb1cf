package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/targets"
)

// Cluster runs the processes of a target that has a lifecycle: one per declared instance, each
// listening on its instance's address, so that a killed instance can be restarted on the same
// address and store; or, for a target without instances (a queue worker with no HTTP port),
// lifecycle.replicas processes, each given a free address.
type Cluster struct {
	t     *targets.Target
	procs *Processes
	vars  targets.LifecycleVars

	count BrokerCount // for ready.broker_consumers (nil: never ready that way)

	mu      sync.Mutex
	running []*Process // by instance index; nil when stopped
	kills   int
	env     []string // extra "NAME=value" entries every start adds (EnvFault)
}

// DefaultReadyTimeout bounds how long an instance may take to become ready when the target
// file gives no readiness probe timeout.
const DefaultReadyTimeout = 30 * time.Second

// StartCluster starts every instance of t and waits until each is ready. vars fill
// {{.Downstream}}, {{.Storage}} and {{.Broker}} ({{.Addr}} is each instance's); count tells
// the readiness probe ready.broker_consumers what the broker counts (nil when the target has
// no such probe).
func StartCluster(ctx context.Context, t *targets.Target, procs *Processes, vars targets.LifecycleVars, count BrokerCount) (*Cluster, error) {
	if t.Lifecycle == nil {
		return nil, fmt.Errorf("target %s has no lifecycle", t.Name)
	}
	c := &Cluster{t: t, procs: procs, running: make([]*Process, replicas(t)), vars: vars, count: count}
	for i := range c.running {
		if err := c.Start(ctx, i); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// replicas is how many processes a target's lifecycle runs: one per instance, else its
// declared replicas (at least one).
func replicas(t *targets.Target) int {
	if len(t.Instances) > 0 {
		return len(t.Instances)
	}
	return max(t.Lifecycle.Replicas, 1)
}

// Start starts instance i (again) on its address and waits until it is ready. A process
// without a declared instance gets a free address on each start; since another program of the
// machine may take that port before the process binds it, a start that ends with the process
// exiting on a port in use is tried again on another (twice at most).
func (c *Cluster) Start(ctx context.Context, i int) error {
	for try := 1; ; try++ {
		err := c.start(ctx, i)
		if err == nil || i < len(c.t.Instances) || try == 3 || !portInUse(err) {
			return err
		}
	}
}

// portInUse reports whether err is a process's exit before it was ready on a port in use (the
// words of Go, Python, Java and Node.js).
func portInUse(err error) bool {
	var early *exitedEarly
	if !errors.As(err, &early) {
		return false
	}
	out := strings.ToLower(early.output)
	return strings.Contains(out, "address already in use") || strings.Contains(out, "eaddrinuse")
}

// exitedEarly is a process's exit before it was ready, with what it printed.
type exitedEarly struct{ name, output string }

func (e *exitedEarly) Error() string {
	return fmt.Sprintf("%s exited before it was ready: %s", e.name, e.output)
}

// start starts instance i once.
func (c *Cluster) start(ctx context.Context, i int) error {
	vars := c.vars
	if i < len(c.t.Instances) {
		vars.Addr = c.t.Instances[i].Addr()
	} else {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		vars.Addr = addr
	}
	argv, env, err := c.t.Lifecycle.Render(vars)
	if err != nil {
		return err
	}
	c.mu.Lock()
	env = append(env, c.env...)
	c.mu.Unlock()
	var readyLine *regexp.Regexp
	if r := c.t.Lifecycle.Ready; r != nil {
		readyLine = r.Log
	}
	p, err := c.procs.StartWatching(fmt.Sprintf("%s instance %d", c.t.Name, i), argv, env, c.t.Lifecycle.Dir, readyLine)
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

// waitReady polls the readiness probe (the instance's path or port, the broker's consumers, or
// the process's output) until it answers or the process dies.
func (c *Cluster) waitReady(ctx context.Context, i int, p *Process) error {
	r := c.t.Lifecycle.Ready
	if r == nil {
		r = &targets.Ready{Timeout: DefaultReadyTimeout}
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	probe, where := c.probe(r, i)
	defer probe.close()
	for {
		if probe.ready(ctx) {
			return nil
		}
		select {
		case <-p.Done():
			return &exitedEarly{name: p.Name, output: p.Output()}
		case <-p.Ready():
			return nil
		case <-ctx.Done():
			return fmt.Errorf("%s was not ready %s within %v: %s", p.Name, where, r.Timeout, p.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readyProbe is one way of telling that a process is ready.
type readyProbe interface {
	ready(ctx context.Context) bool
	close()
}

// probe returns the readiness probe of process i and where it looks, for errors.
func (c *Cluster) probe(r *targets.Ready, i int) (readyProbe, string) {
	switch {
	case r.Log != nil:
		return never{}, fmt.Sprintf("(no line of its output matched %q)", r.Log)
	case r.BrokerConsumers > 0:
		return &brokerProbe{c: c, each: r.BrokerConsumers}, fmt.Sprintf("(its broker did not count %d consumers for each running process)", r.BrokerConsumers)
	}
	in := &c.t.Instances[i]
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: c.t.TLSConfig()}}
	return &httpProbe{hc: hc, in: in, path: r.Path}, "at " + in.URL.Redacted()
}

// never is the probe of a process that tells its readiness itself (Process.Ready).
type never struct{}

func (never) ready(context.Context) bool { return false }
func (never) close()                     {}

// httpProbe is ready at a 2xx on its path, or once the port accepts a connection (path "").
type httpProbe struct {
	hc   *http.Client
	in   *targets.Instance
	path string
}

func (h *httpProbe) ready(ctx context.Context) bool { return ready(ctx, h.hc, h.in, h.path) }
func (h *httpProbe) close()                         { h.hc.CloseIdleConnections() }

// freeAddr returns a free 127.0.0.1 address for a process without a declared instance.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
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

package selftest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// processLabel marks the properties that kill the target's processes: the self-test runs
// them against reference API processes it starts through a lifecycle (durable stores only),
// the others against in-process instances.
const processLabel = "fault:process"

// isProcessProperty reports whether a property needs a managed target.
func isProcessProperty(name string) bool {
	for _, p := range framework.Properties() {
		if p.Name == name {
			return slices.Contains(p.Labels, processLabel)
		}
	}
	return false
}

// managedTarget renders the embedded managed reference target for a store and mutant. On
// PostgreSQL and Redis the store is reached through the harness's storage proxy, so that
// crash-under-load can slow and cut the link; a DSN the proxy cannot stand in for (a Unix
// socket, TLS, a keyword/value DSN) is used as it is, and crash-under-load then runs
// without storage faults.
func (st *stores) managedTarget(sp *space, m reference.Mutant) (*targets.Target, error) {
	reserved, err := ports.Reserve(1)
	if err != nil {
		return nil, err
	}
	doc := string(examples.ReferenceManaged)
	dsn := ""
	proxied := func(url, defaultPort string) {
		templated, storage, ok := proxiedDSN(url, defaultPort)
		if !ok {
			dsn = url
			return
		}
		dsn = templated
		doc += "\nstorage:\n  address: " + strconv.Quote(storage) + "\n"
	}
	kind := sp.kind
	switch kind {
	case "sqlite":
		dsn = filepath.Join(st.dir, fmt.Sprintf("managed-%d.db", sp.cell))
	case "postgres":
		proxied(sp.dsn, "5432")
	case "redis":
		proxied(sp.dsn, "6379")
	}
	mutant := string(m)
	if mutant == "" {
		mutant = "none"
	}
	vars := map[string]string{
		"RETRYSAFE_BIN": st.opts.Binary, "RETRYSAFE_URL": reserved.URLs()[0], "RETRYSAFE_REUSE_PORT": "true", "RETRYSAFE_STORE": kind,
		"RETRYSAFE_DSN": dsn, "RETRYSAFE_MUTANT": mutant,
		// Keys must outlive the crash waits, or an expired key would hide a stuck lock.
		"RETRYSAFE_RETENTION":    max(st.opts.Retention, 10*st.opts.LockTimeout).String(),
		"RETRYSAFE_LOCK_TIMEOUT": st.opts.LockTimeout.String(),
	}
	t, err := targets.Parse("reference-managed.yaml (embedded)", []byte(doc), func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
	if err != nil {
		reserved.Close()
		return nil, err
	}
	t.Own(reserved) // the process's port stays its own across kills and restarts
	return t, nil
}

// varsThenEnv looks a ${NAME} of an embedded target file up in vars, then in the environment.
func varsThenEnv(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	}
}

// parseOwning parses an embedded target file (its ${NAME}s from vars, then the environment) and
// makes the target own reserved, the ports its processes listen on: they stay its own across
// kills and restarts until it closes, or are released now when the file does not parse.
func parseOwning(name string, doc []byte, vars map[string]string, reserved *ports.Reservation) (*targets.Target, error) {
	t, err := targets.Parse(name, doc, varsThenEnv(vars))
	if err != nil {
		reserved.Close()
		return nil, err
	}
	t.Own(reserved)
	return t, nil
}

// proxiedDSN rewrites a URL-form DSN (postgres://user@host:port/db?..., redis://host:port/0)
// so that its host:port is the storage proxy's ({{.Storage}}), and returns the address the
// proxy forwards to (with defaultPort when the URL names none).
func proxiedDSN(dsn, defaultPort string) (templated, addr string, ok bool) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" || strings.Contains(u.Host, ",") {
		return "", "", false
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		// TLS checks the server's name, and host or port parameters override the URL's.
		q := u.Query()
		if q.Has("host") || q.Has("port") || strings.HasPrefix(q.Get("sslmode"), "verify") {
			return "", "", false
		}
	case "redis":
	default: // rediss (TLS), unix sockets, ...
		return "", "", false
	}
	start := strings.Index(dsn, "//")
	if start < 0 {
		return "", "", false
	}
	start += 2
	if at := strings.LastIndex(dsn[start:strings.IndexAny(dsn[start:]+"/", "/?")+start], "@"); at >= 0 {
		start += at + 1
	}
	if !strings.HasPrefix(dsn[start:], u.Host) {
		return "", "", false
	}
	addr = u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), defaultPort)
	}
	return dsn[:start] + "{{.Storage}}" + dsn[start+len(u.Host):], addr, true
}

// runManaged starts the reference API through its lifecycle (one process, mutant m) on a
// durable store and runs the selected properties against it.
func (st *stores) runManaged(ctx context.Context, kind string, m reference.Mutant, labelFilter string) (*reports.Run, error) {
	sp, err := st.space(ctx, kind)
	if err != nil {
		return nil, err
	}
	defer st.release(sp)
	t, err := st.managedTarget(sp, m)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return st.run(ctx, t, sp.cell, labelFilter, 0)
}

// run opens a harness on a prepared target and runs the selected properties (maxWait: the
// run's --max-wait, 0 for the default).
func (st *stores) run(ctx context.Context, t *targets.Target, cell int64, labelFilter string, maxWait time.Duration, opts ...framework.Option) (*reports.Run, error) {
	settings := st.opts.Settings
	if maxWait > 0 {
		settings.MaxWait = maxWait
	}
	settings.RunID = fmt.Sprintf("%s-%d", st.sv.runID, cell)
	settings.KeyPrefix = ""
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	log := logOf(ctx)
	fmt.Fprintf(log, "run %s: target %s, properties %q\n", settings.RunID, t.Name, labelFilter)
	opts = append(opts, framework.WithSettings(settings), framework.WithLog(log), framework.WithProgress(log), framework.WithProcessOutput(log))
	h, err := framework.Open(ctx, t, opts...)
	if err != nil {
		return nil, fmt.Errorf("start the reference API: %w", err)
	}
	defer h.Close()
	res, err := h.Run(ctx, framework.Selection{LabelFilter: labelFilter})
	if err != nil {
		return nil, err
	}
	if err := reports.RenderMarkdown(log, res.Report); err != nil {
		fmt.Fprintf(log, "(the run's report could not be written: %v)\n", err)
	}
	if run := res.Report; !run.Complete {
		return run, fmt.Errorf("self-test interrupted: %s", run.Incomplete)
	}
	return res.Report, nil
}

// defaultBinary is the retrysafe binary the managed cells start: this program.
func defaultBinary() string {
	self, err := os.Executable()
	if err != nil {
		return "retrysafe"
	}
	return self
}

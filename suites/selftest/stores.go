package selftest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// stores opens the reference's stores for the cells of one self-test, each in the cell's own
// places of the shared services (spaces.go).
type stores struct {
	opts *Options
	dir  string
	sv   *services
	n    atomic.Int64
}

// space opens a new cell's places for a store of kind: its number, its schema or key prefix.
// The caller releases it (space.release) when the cell ends.
func (st *stores) space(ctx context.Context, kind string) (*space, error) {
	return st.sv.open(ctx, st.n.Add(1), kind)
}

// open opens a fresh store of the given kind in a cell's space.
func (st *stores) open(ctx context.Context, sp *space) (reference.Store, error) {
	switch sp.kind {
	case "memory":
		return reference.NewMemoryStore(), nil
	case "sqlite":
		return reference.OpenSQLite(ctx, filepath.Join(st.dir, fmt.Sprintf("cell-%d.db", sp.cell)))
	case "postgres":
		return reference.OpenPostgres(ctx, sp.dsn)
	case "redis":
		return reference.OpenRedis(ctx, sp.dsn, "")
	}
	return nil, fmt.Errorf("%w %q", reference.ErrUnknownStore, sp.kind)
}

// instance is one in-process reference API listening on 127.0.0.1.
type instance struct {
	url   string
	srv   *http.Server
	store reference.Store
	stop  context.CancelFunc
}

func (in *instance) close() {
	in.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = in.srv.Shutdown(ctx)
	_ = in.store.Close()
}

// start serves the reference API on a store.
func start(store reference.Store, cfg reference.Config) (*instance, error) {
	cfg.Store = store
	api, err := reference.NewAPI(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go api.PruneLoop(ctx)
	return &instance{url: "http://" + ln.Addr().String(), srv: srv, store: store, stop: stop}, nil
}

// cell says what one in-process run starts and runs: the reference API (a mutant, a shape) on a
// store, how many instances, and which properties.
type cell struct {
	kind        string
	mutant      reference.Mutant
	instances   int
	labelFilter string
	shape       *shape        // nil: the reference as reference.yaml describes it
	retention   time.Duration // declared and served (0: the self-test's)
	maxWait     time.Duration // --max-wait of the run (0: the default)
}

// runAgainst starts the cell's instances of the reference API on its store and runs the
// selected properties against them. Instances on the memory store each have their own store
// (they cannot share one); on the other stores they share it.
func (st *stores) runAgainst(ctx context.Context, c cell) (*reports.Run, error) {
	kind, m, n := c.kind, c.mutant, max(c.instances, 1)
	retention := st.opts.Retention
	if c.retention > 0 {
		retention = c.retention
	}
	sp, err := st.space(ctx, kind)
	if err != nil {
		return nil, err
	}
	defer st.release(sp)
	sink, err := faults.NewSink("127.0.0.1:0", "")
	if err != nil {
		return nil, err
	}
	handed := false // to the harness, which closes it
	defer func() {
		if !handed {
			sink.Close()
		}
	}()
	cfg := reference.Config{
		Downstream:  sink.URL(),
		Tenants:     []string{"alice", "bob"},
		Mutant:      m,
		Retention:   retention,
		LockTimeout: st.opts.LockTimeout,
		WorkDelay:   reference.DefaultWorkDelay,
	}
	doc := examples.Reference
	if c.shape != nil {
		c.shape.configure(&cfg)
		doc = c.shape.doc
	}
	var urls []string
	var shared reference.Store
	for range n {
		store := shared
		if store == nil {
			if store, err = st.open(ctx, sp); err != nil {
				return nil, fmt.Errorf("open %s store: %w", kind, err)
			}
			if kind != "memory" {
				shared = store
			}
		}
		in, err := start(store, cfg)
		if err != nil {
			return nil, err
		}
		if store == shared && len(urls) > 0 {
			defer in.stop() // a second instance on a shared store: close the store once
			defer in.srv.Close()
		} else {
			defer in.close()
		}
		urls = append(urls, in.url)
	}
	t, err := loadTarget(doc, urls, kind != "memory" || n == 1, retention, st.opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	var opts []framework.Option
	if cfg.Downstream != "" { // an API without a downstream (a shape's) calls no sink
		opts, handed = []framework.Option{framework.WithSink(sink)}, true
	}
	return st.run(ctx, t, sp.cell, c.labelFilter, c.maxWait, opts...)
}

// release removes a cell's places in the shared services; what it cannot remove is said, and
// swept when the self-test ends.
func (st *stores) release(sp *space) {
	if err := sp.release(); err != nil {
		fmt.Fprintf(st.opts.Progress, "  cell %d: cannot remove its %s places (swept at the end): %v\n", sp.cell, sp.kind, err)
	}
}

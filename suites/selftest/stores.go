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
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// stores opens the reference API's stores for the cells of one self-test and cleans up
// what they leave in shared services.
type stores struct {
	opts   *Options
	dir    string
	prefix string // Redis key prefix of this self-test
	n      atomic.Int64
	redis  []*reference.RedisStore
}

// open opens a fresh store of the given kind for one cell.
func (st *stores) open(ctx context.Context, kind string, cell int64) (reference.Store, error) {
	switch kind {
	case "memory":
		return reference.NewMemoryStore(), nil
	case "sqlite":
		return reference.OpenSQLite(ctx, filepath.Join(st.dir, fmt.Sprintf("cell-%d.db", cell)))
	case "postgres":
		return reference.OpenPostgres(ctx, st.opts.PostgresDSN)
	case "redis":
		s, err := reference.OpenRedis(ctx, st.opts.RedisURL, fmt.Sprintf("%s%d:", st.prefix, cell))
		if err == nil {
			st.redis = append(st.redis, s)
		}
		return s, err
	}
	return nil, fmt.Errorf("%w %q", reference.ErrUnknownStore, kind)
}

// purge deletes the Redis keys of this self-test.
func (st *stores) purge(ctx context.Context) {
	for _, s := range st.redis {
		_ = s.Purge(ctx)
		_ = s.Close()
	}
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
	if _, isRedis := in.store.(*reference.RedisStore); !isRedis {
		_ = in.store.Close() // Redis stores are purged and closed at the end
	}
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

// runAgainst starts n instances of the reference API (with a mutant) on a store and runs
// the selected properties against them. Instances on the memory store each have their own
// store (they cannot share one); on the other stores they share it.
func (st *stores) runAgainst(ctx context.Context, kind string, m reference.Mutant, n int, labelFilter string) (*reports.Run, error) {
	cell := st.n.Add(1)
	sink, err := faults.NewSink("127.0.0.1:0", "")
	if err != nil {
		return nil, err
	}
	handed := false // to the faults, which close it
	defer func() {
		if !handed {
			sink.Close()
		}
	}()
	cfg := reference.Config{
		Downstream:  sink.URL(),
		Tenants:     []string{"alice", "bob"},
		Mutant:      m,
		Retention:   st.opts.Retention,
		LockTimeout: st.opts.LockTimeout,
		WorkDelay:   reference.DefaultWorkDelay,
	}
	var urls []string
	var shared reference.Store
	for range n {
		store := shared
		if store == nil {
			if store, err = st.open(ctx, kind, cell); err != nil {
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
	t, err := loadTarget(urls, kind != "memory" || n == 1, st.opts.Retention, st.opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	f := suites.NewFaults(t)
	f.Sink, handed = sink, true
	defer f.Close()
	return st.runEnv(t, f, cell, labelFilter)
}

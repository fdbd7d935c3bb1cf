package reference

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults/ports"
	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// Default store locations; the environment variables override them. The consumer shares
// them (internal/storekit).
const (
	// DefaultPostgresDSN is postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
	DefaultPostgresDSN = storekit.DefaultPostgresDSN
	// EnvPostgresDSN, RETRYSAFE_PG_DSN, overrides DefaultPostgresDSN.
	EnvPostgresDSN = storekit.EnvPostgresDSN
	// EnvRedisURL, RETRYSAFE_REDIS_URL, overrides DefaultRedisURL.
	EnvRedisURL = storekit.EnvRedisURL
)

// DefaultDSN returns the DSN a store uses when none is given: the environment override or
// the built-in default. SQLite's default is a file in a new temporary directory.
func DefaultDSN(store string) (string, error) {
	return storekit.DefaultDSN(store, "retrysafe-sqlite-", "reference.db")
}

// OpenStore opens a store by name: memory, sqlite, postgres or redis. An empty dsn takes
// DefaultDSN.
func OpenStore(ctx context.Context, name, dsn string) (Store, error) {
	if dsn == "" && name != "memory" {
		var err error
		if dsn, err = DefaultDSN(name); err != nil {
			return nil, err
		}
	}
	switch name {
	case "memory":
		return NewMemoryStore(), nil
	case "sqlite":
		return OpenSQLite(ctx, dsn)
	case "postgres":
		return OpenPostgres(ctx, dsn)
	case "redis":
		return OpenRedis(ctx, dsn, "")
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownStore, name, strings.Join(AllStores, ", "))
}

// ServeOptions configures Serve.
type ServeOptions struct {
	Addr   string // host:port; port 0 picks one
	Store  string
	DSN    string
	Config Config    // Store is filled in by Serve
	Out    io.Writer // receives the "listening on" line
	Log    *log.Logger
	// ReusePort listens with SO_REUSEPORT, on a port a harness keeps reserved across this
	// process's restarts (faults/ports).
	ReusePort bool
}

// Serve opens the store, listens, prints `listening on http://HOST:PORT` and serves until
// ctx ends; then it shuts down cleanly.
func Serve(ctx context.Context, opts ServeOptions) error {
	store, err := OpenStore(ctx, opts.Store, opts.DSN)
	if err != nil {
		return fmt.Errorf("open %s store: %w", opts.Store, err)
	}
	defer store.Close()
	cfg := opts.Config
	cfg.Store = store
	cfg.Logger = opts.Log
	api, err := NewAPI(cfg)
	if err != nil {
		return err
	}
	ln, err := ports.Listen(opts.Addr, opts.ReusePort)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, ErrorLog: opts.Log}
	pruneCtx, stopPrune := context.WithCancel(ctx)
	defer stopPrune()
	go api.PruneLoop(pruneCtx)
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		api.RelayLoop(pruneCtx)
	}()
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		api.WorkerLoop(pruneCtx)
	}()
	defer func() { stopPrune(); <-relayDone; <-workerDone }() // the relay and the worker end before the store closes
	fmt.Fprintf(opts.Out, "listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

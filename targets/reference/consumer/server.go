package consumer

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

// DefaultDSN returns the DSN a store uses when none is given: for postgres and redis the
// reference API's (RETRYSAFE_PG_DSN, RETRYSAFE_REDIS_URL or the built-in default); for
// sqlite a file consumer.db in a new temporary directory.
func DefaultDSN(store string) (string, error) {
	return storekit.DefaultDSN(store, "retrysafe-consumer-", "consumer.db")
}

// OpenStore opens a store by name: memory, sqlite (dsn = file path), postgres (dsn = pgx
// URL or keyword/value DSN; search_path selects the schema) or redis (dsn = redis:// URL;
// keys under its key_prefix parameter, else DefaultRedisPrefix). An empty dsn takes DefaultDSN.
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

// PruneOnce deletes the dedupe records older than twice the effective retention (Claim
// already treats those older than one retention as new) and returns how many.
func (c *Consumer) PruneOnce(ctx context.Context) (int, error) {
	retention := c.retention()
	if retention <= 0 {
		return 0, nil
	}
	return c.cfg.Store.Prune(ctx, c.cfg.Now().Add(-2*retention))
}

// PruneLoop runs PruneOnce every quarter of the retention (between 100 ms and a minute)
// until ctx ends (storekit.PruneLoop). It does nothing when dedupe records are never
// forgotten.
func (c *Consumer) PruneLoop(ctx context.Context) {
	storekit.PruneLoop(ctx, c.retention(), c.PruneOnce, c.cfg.Logger)
}

// ServeOptions configures Serve.
type ServeOptions struct {
	Addr   string // host:port; port 0 picks one
	Store  string // memory, sqlite, postgres or redis
	DSN    string // "" = DefaultDSN(Store)
	Config Config // Store and Logger are filled in by Serve
	Out    io.Writer
	Log    *log.Logger
	// ReusePort listens with SO_REUSEPORT, on a port a harness keeps reserved across this
	// process's restarts (faults/ports).
	ReusePort bool
	// Also, when set, runs beside the HTTP server with the consumer (a queue transport that
	// feeds Deliver); Serve returns when it ends or ctx ends.
	Also func(ctx context.Context, c *Consumer) error
}

// Serve opens the store, listens, prints `listening on http://HOST:PORT` to Out once it
// accepts connections, prunes and serves until ctx ends; then it shuts down cleanly.
func Serve(ctx context.Context, opts ServeOptions) error {
	store, err := OpenStore(ctx, opts.Store, opts.DSN)
	if err != nil {
		return fmt.Errorf("open %s store: %w", opts.Store, err)
	}
	defer store.Close()
	cfg := opts.Config
	cfg.Store, cfg.Logger = store, opts.Log
	c, err := New(cfg)
	if err != nil {
		return err
	}
	ln, err := ports.Listen(opts.Addr, opts.ReusePort)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second, ErrorLog: opts.Log}
	pruneCtx, stopPrune := context.WithCancel(ctx)
	defer stopPrune()
	go c.PruneLoop(pruneCtx)
	if opts.Out != nil {
		fmt.Fprintf(opts.Out, "listening on http://%s\n", ln.Addr())
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	alsoDone := make(chan struct{})
	if opts.Also != nil {
		go func() {
			defer close(alsoDone)
			err := opts.Also(ctx, c)
			if err == nil && ctx.Err() == nil {
				err = errors.New("the queue transport stopped")
			}
			errc <- err
		}()
	} else {
		close(alsoDone)
	}
	select {
	case err := <-errc:
		if ctx.Err() == nil {
			return err
		}
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	// The queue transport ends with its context: it settles nothing more, and cleans up what it
	// was asked to (queue.Options.DeleteOnExit) before the process exits.
	select {
	case <-alsoDone:
	case <-time.After(alsoTimeout):
		c.cfg.Logger.Printf("the queue transport did not stop within %v of the end", alsoTimeout)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// alsoTimeout bounds the wait, at the end of Serve, for the queue transport to stop.
const alsoTimeout = 10 * time.Second

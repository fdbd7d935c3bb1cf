package bench

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// server is one in-process reference API on 127.0.0.1 and the target file describing it.
type server struct {
	url    string
	srv    *http.Server
	store  reference.Store
	target *targets.Target
	tmp    string
}

// startServer serves the reference API on a fresh store of the given kind.
func startServer(ctx context.Context, kind string, m reference.Mutant, workDelay time.Duration, pgDSN string) (*server, error) {
	s := &server{}
	var err error
	dsn := pgDSN
	if kind == "sqlite" {
		s.tmp, err = os.MkdirTemp("", "retrysafe-bench-")
		dsn = filepath.Join(s.tmp, "bench.db")
	}
	if err == nil {
		s.store, err = reference.OpenStore(ctx, kind, dsn)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	api, err := reference.NewAPI(reference.Config{
		Store: s.store, Tenants: []string{"alice", "bob"}, Mutant: m,
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout, WorkDelay: workDelay,
	})
	if err != nil {
		s.close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.close()
		return nil, err
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	vars := map[string]string{"RETRYSAFE_URL": s.url}
	s.target, err = targets.Parse("reference.yaml (embedded)", examples.Reference, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// session opens a harness against the server and returns a running session on it; close
// closes the harness.
func (s *server) session(settings framework.Settings) (sess *framework.S, close func()) {
	settings.Seed = 1
	h, err := framework.Open(context.Background(), s.target, framework.WithSettings(settings))
	if err != nil {
		panic("bench: open a harness on the in-process server: " + err.Error()) // the server is this process's own
	}
	return h.Env().Session(context.Background()), func() { h.Close() }
}

func (s *server) close() {
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.srv.Shutdown(ctx)
		cancel()
	}
	if s.target != nil {
		s.target.Close()
	}
	if s.store != nil {
		_ = s.store.Close()
	}
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

package consumer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var listeningLine = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)\n$`)

// TestServe starts Serve on a free port, waits for its "listening on" line, delivers an
// event, and stops it.
func TestServe(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Addr: "127.0.0.1:0", Store: "memory", Out: pw,
			Config: Config{WorkDelay: -1}})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	m := listeningLine.FindStringSubmatch(line)
	if err != nil || m == nil {
		cancel()
		t.Fatalf("Serve printed %q (%v), want a listening line", line, err)
	}
	base := m[1]
	for i, want := range []string{`"status":"processed"`, `"status":"duplicate"`} {
		resp, err := http.Post(base+"/webhooks", "application/json", bytes.NewReader(event("evt_serve", "obj_1", 1)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("delivery %d: %d %s, want 200 %s", i, resp.StatusCode, body, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after its context ended, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range map[string]string{
		"memory":   "",
		"sqlite":   t.TempDir() + "/open.db",
		"postgres": newPGSchema(t),
		"redis":    testRedisURL(), // opened only: nothing is written under the default prefix
	} {
		s, err := OpenStore(ctx, name, dsn)
		if err != nil {
			t.Errorf("OpenStore(%s): %v", name, err)
			continue
		}
		s.Close()
	}
	if _, err := OpenStore(ctx, "mysql", ""); !errors.Is(err, ErrUnknownStore) || !strings.Contains(err.Error(), "memory, sqlite, postgres, redis") {
		t.Errorf("OpenStore(mysql) error = %v, want ErrUnknownStore with the known names", err)
	}
	if err := Serve(ctx, ServeOptions{Store: "mysql"}); !errors.Is(err, ErrUnknownStore) {
		t.Errorf("Serve with an unknown store = %v", err)
	}
}

// TestMigrationIsIdempotent: opening a migrated database again keeps its version and data.
func TestMigrationIsIdempotent(t *testing.T) {
	b := newBackend(t, "sqlite")
	first := b.open(t)
	scDone(t, first, Completion{Now: scAt(0), Effect: Effect{"e1", "o1", 1, scAt(0), "e1"}}, true)
	again := b.open(t).(*SQLStore)
	var v int
	if err := again.db.QueryRow(`SELECT MAX(version) FROM rsc_schema_version`).Scan(&v); err != nil || v != schema.Latest() {
		t.Errorf("schema version = %d, %v; want %d", v, err, schema.Latest())
	}
	scWantEffects(t, again, EffectFilter{Event: "e1"}, 1)
}

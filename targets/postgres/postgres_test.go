package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// fakeConnector fails with err its first fails connections.
type fakeConnector struct {
	fails, calls int
	err          error
}

func (f *fakeConnector) Connect(context.Context) (driver.Conn, error) {
	if f.calls++; f.calls <= f.fails {
		return nil, f.err
	}
	return nil, nil
}

func (f *fakeConnector) Driver() driver.Driver { return nil }

func TestAConnectionWaitsWhileTheServerIsFull(t *testing.T) {
	full := &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}
	tests := []struct {
		name      string
		err       error
		fails     int
		wantCalls int
		wantErr   bool
	}{
		{"the server frees a slot", full, 3, 4, false},
		{"another error is not retried", &pgconn.PgError{Code: "28P01"}, 3, 1, true},
		{"a plain error is not retried", errors.New("connection refused"), 1, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeConnector{fails: tt.fails, err: tt.err}
			_, err := waitingConnector{f}.Connect(context.Background())
			if f.calls != tt.wantCalls || (err != nil) != tt.wantErr {
				t.Errorf("calls %d, err %v; want %d calls, an error: %v", f.calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeConnector{fails: 100, err: full}
	if _, err := (waitingConnector{f}).Connect(ctx); err == nil || f.calls != 1 {
		t.Errorf("with its context ended: calls %d, err %v; want 1 call and the server's refusal", f.calls, err)
	}
}

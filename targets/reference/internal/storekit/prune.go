package storekit

import (
	"context"
	"log"
	"time"
)

// PruneLoop calls prune every quarter of the retention (between 100 ms and a minute) until
// ctx ends, and logs its errors (not those caused by ctx ending). It returns at once when
// retention <= 0: nothing ever expires.
func PruneLoop(ctx context.Context, retention time.Duration, prune func(context.Context) (int, error), logger *log.Logger) {
	if retention <= 0 {
		return
	}
	t := time.NewTicker(min(max(retention/4, 100*time.Millisecond), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := prune(ctx); err != nil && ctx.Err() == nil {
				logger.Printf("prune: %v", err)
			}
		}
	}
}

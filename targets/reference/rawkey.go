package reference

import (
	"context"
	"fmt"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// The raw-store-key mutant: the defect of a library that uses the raw header value as its store
// key. Its scope is the operation's namespace (tenant, method, path: opaque and fixed-length) and
// the key verbatim, and it caches each answer beside the key's claim under a name of its own,
// NS:idempotency:KEY. A claim and a cached answer are entries of different types in a store that
// has types (Redis: a hash and a string), so a crafted key idempotency:K names key K's cached
// answer as its claim, and every command on it fails. The correct API's scope is a hash of the
// whole tuple (scopeID): no key can name another entry.

// rawScope is the raw-store-key mutant's scope of a key: the operation's namespace and the key
// as it came.
func rawScope(tenant, method, path, key string) string {
	return scopeID(tenant, method, path)[:16] + ":" + key
}

// answerCache is a store that can keep an answer under a name of its own (the raw-store-key
// mutant's cache); only the Redis store, whose entries have types, is one.
type answerCache interface {
	CacheAnswer(ctx context.Context, name string, resp Response, ttl time.Duration) error
}

// cacheAnswer is the raw-store-key mutant's cache of a completed key's answer, beside its claim.
func (a *API) cacheAnswer(ctx context.Context, method string, at attempt, resp Response) {
	c, ok := a.cfg.Store.(answerCache)
	if a.cfg.Mutant != MutantRawStoreKey || !ok {
		return
	}
	name := rawScope(at.tenant, method, at.path, "idempotency:"+at.key)
	if err := c.CacheAnswer(ctx, name, resp, a.retention()); err != nil {
		a.cfg.Logger.Printf("raw-store-key: cache the answer: %v", err)
	}
}

// CacheAnswer keeps an answer as a string under the key space's name (the raw-store-key
// mutant's cache), for as long as a key of that retention.
func (s *RedisStore) CacheAnswer(ctx context.Context, name string, resp Response, retention time.Duration) error {
	ttl := time.Duration(storekit.TTLMillis(retention)) * time.Millisecond
	if err := s.rdb.Set(ctx, s.keyKey(name), resp.Body, ttl).Err(); err != nil {
		return fmt.Errorf("redis store: cache an answer: %w", err)
	}
	return nil
}

package reference

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// The raw-store-key mutant: the defect of a library that uses the raw header value as its store
// key. Its scope is the operation's namespace (tenant, method, path: opaque and fixed-length) and
// the key verbatim. On Redis it caches each answer beside the key's claim under a name of its
// own, NS:idempotency:KEY: a claim and a cached answer are entries of different types (a hash and
// a string), so a crafted key idempotency:K names key K's cached answer as its claim, and every
// command on it fails. On the SQL stores, whose tables hold one kind of row, it looks a completed
// answer up by pattern first (scope LIKE the raw scope, the fingerprint equal: a fast path that
// finds a key stored under any suffix), so a crafted key K% reads key K's answer. The correct
// API's scope is a hash of the whole tuple (scopeID): no key can name another entry.

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

// patternLookup is a store that can find a completed answer by a pattern over scopes (the
// raw-store-key mutant's fast path); the SQL stores are.
type patternLookup interface {
	LookupPattern(ctx context.Context, pattern, fingerprint string) (*Response, error)
}

// rawReplay is the raw-store-key mutant's fast path on a store that looks answers up by pattern:
// a completed answer whose scope matches the raw scope, with the same fingerprint, is replayed.
// It reports whether it answered.
func (a *API) rawReplay(w http.ResponseWriter, ctx context.Context, at attempt) bool {
	pl, ok := a.cfg.Store.(patternLookup)
	if a.cfg.Mutant != MutantRawStoreKey || !ok {
		return false
	}
	resp, err := pl.LookupPattern(ctx, at.scope, at.fingerprint)
	if err != nil {
		a.cfg.Logger.Printf("raw-store-key: look up %q: %v", at.scope, err)
		return false
	}
	if resp == nil {
		return false
	}
	a.replay(w, ctx, at, *resp)
	return true
}

// LookupPattern returns the answer of a completed key whose scope is LIKE pattern (unescaped)
// and whose fingerprint is fingerprint, or nil (the raw-store-key mutant's fast path).
func (s *SQLStore) LookupPattern(ctx context.Context, pattern, fingerprint string) (*Response, error) {
	var resp Response
	err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT status, body FROM rs_keys
		WHERE scope LIKE ? AND fingerprint = ? AND state = ? LIMIT 1`), pattern, fingerprint, string(StateDone)).Scan(&resp.Status, &resp.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lookup by pattern: %w", err)
	}
	return &resp, nil
}

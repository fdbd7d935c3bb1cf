package storekit

import (
	"context"
	"fmt"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisPrefixParam is the query parameter of a store's Redis URL that namespaces its keys
// (redis://127.0.0.1:6379/0?key_prefix=cell-7:), so that stores of several runs share one
// Redis without sharing a key. go-redis does not know it: SplitRedisPrefix takes it out.
const RedisPrefixParam = "key_prefix"

// SplitRedisPrefix returns url without its key_prefix parameter, and that parameter ("" when
// it has none, or url is not a URL).
func SplitRedisPrefix(raw string) (url, prefix string) {
	u, err := neturl.Parse(raw)
	if err != nil || !u.Query().Has(RedisPrefixParam) {
		return raw, ""
	}
	q := u.Query()
	prefix = q.Get(RedisPrefixParam)
	q.Del(RedisPrefixParam)
	u.RawQuery = q.Encode()
	return u.String(), prefix
}

// OpenRedis connects to the Redis at url (DefaultRedisURL when empty) and checks it
// answers. Command retries are disabled unless the URL sets max_retries: go-redis re-sends
// a command after a lost connection, and a script that ran but whose reply was lost would
// then run twice (a duplicate write, or a winner told "in flight" by its own claim).
func OpenRedis(ctx context.Context, url string) (*redis.Client, error) {
	if url == "" {
		url = DefaultRedisURL
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis store: %w", err)
	}
	if !strings.Contains(url, "max_retries=") {
		opts.MaxRetries = -1
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis store: ping %s: %w", opts.Addr, err)
	}
	return rdb, nil
}

// releaseScript deletes KEYS[1] if it is in progress with token ARGV[1].
var releaseScript = redis.NewScript(`
local row = redis.call('HMGET', KEYS[1], 'state', 'token')
if row[1] == 'in_progress' and row[2] == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`)

// Release deletes the claim hash key if it is still in progress with token: its fields
// state ("in_progress" while claimed) and token (decimal), as both stores' scripts keep them.
func Release(ctx context.Context, rdb *redis.Client, key string, token int64) error {
	return releaseScript.Run(ctx, rdb, []string{key}, strconv.FormatInt(token, 10)).Err()
}

// scanBatch is how many keys a SCAN step asks for and a batch holds.
const scanBatch = 500

// ScanPrefix calls fn with batches of at most 500 of the keys that start with prefix
// (taken literally: SCAN's glob characters in it are escaped). It stops at fn's first
// error.
func ScanPrefix(ctx context.Context, rdb *redis.Client, prefix string, fn func(keys []string) error) error {
	iter := rdb.Scan(ctx, 0, globEscape(prefix)+"*", scanBatch).Iterator()
	batch := make([]string, 0, scanBatch)
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == cap(batch) {
			if err := fn(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}

// Purge deletes every key that starts with prefix (taken literally, as by ScanPrefix).
func Purge(ctx context.Context, rdb *redis.Client, prefix string) error {
	return ScanPrefix(ctx, rdb, prefix, func(keys []string) error { return rdb.Del(ctx, keys...).Err() })
}

// globEscape escapes the SCAN MATCH metacharacters of s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

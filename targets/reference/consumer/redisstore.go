package consumer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/retrysafe/retrysafe/targets/reference/internal/storekit"
)

// DefaultRedisPrefix namespaces every Redis key when OpenRedis gets an empty prefix. It
// does not start with the reference API's "retrysafe:", so neither purges the other.
const DefaultRedisPrefix = "retrysafe-consumer:"

// RedisStore is the Redis Store. Every write is one Lua script, so several processes
// sharing one Redis behave as instances of one service.
//
// Key layout (P is the prefix):
//   - P+"evt:"+key: hash {state, token, created, locked}, with a PEXPIRE of twice the
//     retention (at least a minute; none when retention <= 0);
//   - P+"eff:all", P+"eff:e:"+event, P+"eff:o:"+object, P+"eff:p:"+operation (an effect that
//     names one): lists of effects (JSON), in the order they were written;
//   - P+"obj:"+object: hash {version, event, updated}.
//
// Times are fixed-width decimal strings (storekit.EncodeTime) compared exactly against
// cut-offs computed from the caller's clock, never Redis TIME.
type RedisStore struct {
	rdb    *redis.Client
	prefix string
}

var _ Store = (*RedisStore)(nil)

// OpenRedis connects to the Redis at url (the reference API's DefaultRedisURL when empty)
// and checks it answers. prefix namespaces every key (when empty: the URL's key_prefix
// parameter, else DefaultRedisPrefix). Command retries are disabled unless the URL sets
// max_retries: a script whose reply was lost must not run twice.
func OpenRedis(ctx context.Context, url, prefix string) (*RedisStore, error) {
	url, fromURL := storekit.SplitRedisPrefix(url)
	prefix = cmp.Or(prefix, fromURL, DefaultRedisPrefix)
	rdb, err := storekit.OpenRedis(ctx, url)
	if err != nil {
		return nil, err
	}
	return &RedisStore{rdb: rdb, prefix: prefix}, nil
}

// Claim implements Store with one script.
func (s *RedisStore) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	v, err := claimScript.Run(ctx, s.rdb, []string{s.eventKey(req.Key)},
		storekit.EncodeTime(storeTime(req.Now)), storekit.Cutoff(req.Now, req.Retention),
		storekit.Cutoff(req.Now, req.LockTimeout), storekit.TTLMillis(req.Retention),
		tokenArg(initialToken(req.Now))).Slice()
	if err != nil {
		return ClaimResult{}, fmt.Errorf("redis store: claim: %w", err)
	}
	out, _ := v[0].(int64)
	switch o := ClaimOutcome(out); o {
	case Claimed:
		ts, _ := v[1].(string)
		tok, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("redis store: claim: bad token %q", ts)
		}
		return ClaimResult{Outcome: o, Token: tok}, nil
	case ClaimInFlight, ClaimDone:
		return ClaimResult{Outcome: o}, nil
	}
	return ClaimResult{}, fmt.Errorf("redis store: claim: unexpected reply %v", v)
}

// Lookup implements Store.
func (s *RedisStore) Lookup(ctx context.Context, key string) (*EventRow, error) {
	m, err := s.rdb.HGetAll(ctx, s.eventKey(key)).Result()
	if err != nil {
		return nil, fmt.Errorf("redis store: lookup: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	row := &EventRow{Key: key, State: EventState(m["state"])}
	if row.Token, err = strconv.ParseInt(m["token"], 10, 64); err == nil {
		if row.CreatedAt, err = storekit.DecodeTime(m["created"]); err == nil {
			row.LockedAt, err = storekit.DecodeTime(m["locked"])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("redis store: lookup %q: %w", key, err)
	}
	return row, nil
}

// redisEffect is an effect as the lists keep it.
type redisEffect struct {
	Event     string `json:"e"`
	Object    string `json:"o"`
	Version   int64  `json:"v,string"`
	Created   string `json:"c"`
	Operation string `json:"p,omitempty"`
}

// Complete implements Store with one script.
func (s *RedisStore) Complete(ctx context.Context, c Completion) (bool, error) {
	mode := "claim"
	switch {
	case c.Key == "":
		mode = "none"
	case c.Force:
		mode = "force"
	}
	e := c.Effect
	created := storekit.EncodeTime(storeTime(e.Created))
	data, err := json.Marshal(redisEffect{e.Event, e.Object, e.Version, created, e.Operation})
	if err != nil {
		return false, fmt.Errorf("redis store: complete: %w", err)
	}
	blind := flag(c.OrderBlind)
	keys := []string{s.eventKey(c.Key), s.prefix + "eff:all", s.prefix + "eff:e:" + e.Event,
		s.prefix + "eff:o:" + e.Object, s.prefix + "obj:" + e.Object, s.prefix + "eff:p:" + e.Operation}
	n, err := completeScript.Run(ctx, s.rdb, keys, mode, tokenArg(c.Token), data,
		strconv.FormatInt(e.Version, 10), e.Event, storekit.EncodeTime(storeTime(c.Now)),
		tokenArg(initialToken(c.Now)), blind, storekit.TTLMillis(c.Retention), flag(e.Operation != "")).Int()
	if err != nil {
		return false, fmt.Errorf("redis store: complete (%s): %w", mode, err)
	}
	return n == 1, nil
}

// MarkDone implements Store.
func (s *RedisStore) MarkDone(ctx context.Context, key string, token int64) (bool, error) {
	n, err := markDoneScript.Run(ctx, s.rdb, []string{s.eventKey(key)}, tokenArg(token)).Int()
	if err != nil {
		return false, fmt.Errorf("redis store: mark done: %w", err)
	}
	return n == 1, nil
}

// Release implements Store.
func (s *RedisStore) Release(ctx context.Context, key string, token int64) error {
	if err := storekit.Release(ctx, s.rdb, s.eventKey(key), token); err != nil {
		return fmt.Errorf("redis store: release: %w", err)
	}
	return nil
}

// Effects implements Store: it reads the narrowest list and filters the rest.
func (s *RedisStore) Effects(ctx context.Context, f EffectFilter) ([]Effect, error) {
	list := s.prefix + "eff:all"
	switch {
	case f.Event != "":
		list = s.prefix + "eff:e:" + f.Event
	case f.Operation != "":
		list = s.prefix + "eff:p:" + f.Operation
	case f.Object != "":
		list = s.prefix + "eff:o:" + f.Object
	}
	items, err := s.rdb.LRange(ctx, list, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redis store: effects: %w", err)
	}
	var out []Effect
	for _, item := range items {
		var re redisEffect
		if err := json.Unmarshal([]byte(item), &re); err != nil {
			return nil, fmt.Errorf("redis store: effect %q: %w", item, err)
		}
		created, err := storekit.DecodeTime(re.Created)
		if err != nil {
			return nil, fmt.Errorf("redis store: effect %q: %w", item, err)
		}
		if e := (Effect{re.Event, re.Object, re.Version, created, re.Operation}); f.Match(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// ObjectVersion implements Store.
func (s *RedisStore) ObjectVersion(ctx context.Context, object string) (int64, error) {
	v, err := s.rdb.HGet(ctx, s.prefix+"obj:"+object, "version").Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redis store: object version: %w", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redis store: object %q: bad version %q", object, v)
	}
	return n, nil
}

// Prune implements Store. Redis also expires dedupe records by itself (see RedisStore);
// Prune catches records without a TTL.
func (s *RedisStore) Prune(ctx context.Context, createdBefore time.Time) (int, error) {
	n, err := storekit.PruneCreatedBefore(ctx, s.rdb, s.prefix+"evt:", storeTime(createdBefore))
	if err != nil {
		return n, fmt.Errorf("redis store: prune: %w", err)
	}
	return n, nil
}

// Purge deletes every Redis key under the store's prefix. Tests and the self-test use it
// to leave a shared Redis as they found it.
func (s *RedisStore) Purge(ctx context.Context) error { return storekit.Purge(ctx, s.rdb, s.prefix) }

// Close closes the Redis client.
func (s *RedisStore) Close() error { return s.rdb.Close() }

func (s *RedisStore) eventKey(key string) string { return s.prefix + "evt:" + key }

func tokenArg(token int64) string { return strconv.FormatInt(token, 10) }

// flag is a script's boolean argument: "1" or "0".
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

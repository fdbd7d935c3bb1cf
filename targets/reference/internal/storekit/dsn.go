package storekit

import (
	"os"
	"path/filepath"
)

// Default store locations; the environment variables override them.
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
	EnvPostgresDSN     = "RETRYSAFE_PG_DSN"
	EnvRedisURL        = "RETRYSAFE_REDIS_URL"
)

// PostgresDSN is EnvPostgresDSN when set, else DefaultPostgresDSN.
func PostgresDSN() string { return envOr(EnvPostgresDSN, DefaultPostgresDSN) }

// RedisURL is EnvRedisURL when set, else DefaultRedisURL.
func RedisURL() string { return envOr(EnvRedisURL, DefaultRedisURL) }

// DefaultDSN returns the DSN a store uses when none is given: PostgresDSN for postgres,
// RedisURL for redis, and for sqlite a file named file in a new temporary directory whose
// name starts with dirPrefix. Any other store (memory, or an unknown name) gets "".
func DefaultDSN(store, dirPrefix, file string) (string, error) {
	switch store {
	case "postgres":
		return PostgresDSN(), nil
	case "redis":
		return RedisURL(), nil
	case "sqlite":
		dir, err := os.MkdirTemp("", dirPrefix)
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, file), nil
	}
	return "", nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

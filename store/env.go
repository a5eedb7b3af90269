package store

import "os"

// The environment variables that name the store, in the order they are
// read: LEGATE_STORE, and LEGATE_STORE_URL, the same under the name some
// deployments give it (a container platform's secret, a compose file).
const (
	EnvStore    = "LEGATE_STORE"
	EnvStoreURL = "LEGATE_STORE_URL"
)

// EnvURL is the store URL the environment names: $LEGATE_STORE, else
// $LEGATE_STORE_URL; "" when neither is set.
func EnvURL() string {
	if u := os.Getenv(EnvStore); u != "" {
		return u
	}
	return os.Getenv(EnvStoreURL)
}

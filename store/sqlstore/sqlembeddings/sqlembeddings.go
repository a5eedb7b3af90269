// Package sqlembeddings is the store of the tool search's embeddings
// (store.EmbeddingStore) over database/sql, for package sqlstore, which
// hands it its database and its dialect's placeholders.
package sqlembeddings

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlstore/sqlkb"
)

// embeddingStore keeps embeddings by key, each vector encoded as the kb
// connector's passages' are (sqlkb.EncodeVector); times in milliseconds.
type embeddingStore struct {
	db     *sql.DB
	rebind func(query string) string
}

// New is the embeddings store on db, whose statements rebind writes in
// the backend's placeholders (they are written with ?).
func New(db *sql.DB, rebind func(string) string) store.EmbeddingStore {
	return embeddingStore{db, rebind}
}

// chunk is how many keys one statement names.
const chunk = 500

func (s embeddingStore) Get(ctx context.Context, keys []string, now time.Time) (map[string][]float32, error) {
	out := map[string][]float32{}
	for part := range slices.Chunk(keys, chunk) {
		marks, args := placeholders(part)
		rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT key, vector FROM embeddings WHERE key IN (`+marks+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("reading embeddings: %w", err)
		}
		for rows.Next() {
			var key string
			var vector []byte
			if err := rows.Scan(&key, &vector); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading embeddings: %w", err)
			}
			out[key] = sqlkb.DecodeVector(vector)
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("reading embeddings: %w", err)
		}
		if _, err := s.db.ExecContext(ctx, s.rebind(`UPDATE embeddings SET used_at = ? WHERE key IN (`+marks+`)`), append([]any{now.UnixMilli()}, args...)...); err != nil {
			return nil, fmt.Errorf("noting embeddings used: %w", err)
		}
	}
	return out, nil
}

func (s embeddingStore) Put(ctx context.Context, vectors map[string][]float32, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("keeping embeddings: %w", err)
	}
	defer tx.Rollback()
	put, err := tx.PrepareContext(ctx, s.rebind(`INSERT INTO embeddings (key, vector, used_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET vector = excluded.vector, used_at = excluded.used_at`))
	if err != nil {
		return fmt.Errorf("keeping embeddings: %w", err)
	}
	defer put.Close()
	for _, key := range slices.Sorted(maps.Keys(vectors)) { // one order: two replicas' puts do not deadlock
		if _, err := put.ExecContext(ctx, key, sqlkb.EncodeVector(vectors[key]), now.UnixMilli()); err != nil {
			return fmt.Errorf("keeping embeddings: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("keeping embeddings: %w", err)
	}
	return nil
}

func (s embeddingStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM embeddings WHERE used_at < ?`), before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning embeddings: %w", err)
	}
	return res.RowsAffected()
}

// placeholders are len(keys) placeholders and the keys as arguments.
func placeholders(keys []string) (string, []any) {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", "), args
}

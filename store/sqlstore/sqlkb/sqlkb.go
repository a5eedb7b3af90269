// Package sqlkb is the store of the knowledge-base instances' documents
// (store.KBStore) over database/sql, for package sqlstore, which hands it
// its database and its dialect's placeholders.
//
// Three tables: kb_generations (one counter per instance, moved by every
// write in the write's transaction: its row also orders the writes of one
// instance), kb_documents (one row per document: its text, hash and the
// generation it was last written at) and kb_passages (one row per passage,
// its headings as a JSON array, its embedding as little-endian float32s).
package sqlkb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

// kbStore keeps the documents of knowledge-base instances; times in
// milliseconds.
type kbStore struct {
	db     *sql.DB
	rebind func(query string) string
}

// New is the store on db, whose statements rebind writes in the backend's
// placeholders (they are written with ?).
func New(db *sql.DB, rebind func(string) string) store.KBStore { return kbStore{db, rebind} }

// loadBatch bounds the sources one statement of Load names.
const loadBatch = 200

func (s kbStore) Generation(ctx context.Context, instance string) (int64, error) {
	var g int64
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT generation FROM kb_generations WHERE instance = ?`), instance).Scan(&g)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("reading the generation of %s: %w", instance, err)
	}
	return g, nil
}

func (s kbStore) Documents(ctx context.Context, instance string) ([]store.KBDocument, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT source, kind, title, hash, revision, updated_at FROM kb_documents WHERE instance = ? ORDER BY source`), instance)
	if err != nil {
		return nil, fmt.Errorf("listing the documents of %s: %w", instance, err)
	}
	defer rows.Close()
	var out []store.KBDocument
	for rows.Next() {
		var d store.KBDocument
		var updated int64
		if err := rows.Scan(&d.Source, &d.Kind, &d.Title, &d.Hash, &d.Revision, &updated); err != nil {
			return nil, fmt.Errorf("listing the documents of %s: %w", instance, err)
		}
		d.Updated = time.UnixMilli(updated).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

func (s kbStore) Load(ctx context.Context, instance string, sources []string) ([]store.KBDocument, error) {
	if sources == nil {
		return s.load(ctx, instance, "", nil)
	}
	var out []store.KBDocument
	for start := 0; start < len(sources); start += loadBatch {
		part := sources[start:min(start+loadBatch, len(sources))]
		args := make([]any, len(part))
		for i, src := range part {
			args[i] = src
		}
		in := " AND source IN (?" + strings.Repeat(", ?", len(part)-1) + ")"
		docs, err := s.load(ctx, instance, in, args)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// load reads the documents of instance that cond (" AND …", with args)
// selects, and their passages, by source.
func (s kbStore) load(ctx context.Context, instance, cond string, args []any) ([]store.KBDocument, error) {
	all := append([]any{instance}, args...)
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT source, kind, title, body, hash, revision, updated_at FROM kb_documents WHERE instance = ?`+cond+` ORDER BY source`), all...)
	if err != nil {
		return nil, fmt.Errorf("loading the documents of %s: %w", instance, err)
	}
	var out []store.KBDocument
	at := map[string]int{}
	for rows.Next() {
		var d store.KBDocument
		var updated int64
		if err := rows.Scan(&d.Source, &d.Kind, &d.Title, &d.Text, &d.Hash, &d.Revision, &updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("loading the documents of %s: %w", instance, err)
		}
		d.Updated = time.UnixMilli(updated).UTC()
		at[d.Source] = len(out)
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("loading the documents of %s: %w", instance, err)
	}
	rows, err = s.db.QueryContext(ctx, s.rebind(`SELECT source, headings, body, hash, vector_key, vector FROM kb_passages WHERE instance = ?`+cond+` ORDER BY source, position`), all...)
	if err != nil {
		return nil, fmt.Errorf("loading the passages of %s: %w", instance, err)
	}
	defer rows.Close()
	for rows.Next() {
		var src, headings string
		var p store.KBPassage
		var vector []byte
		if err := rows.Scan(&src, &headings, &p.Text, &p.Hash, &p.VectorKey, &vector); err != nil {
			return nil, fmt.Errorf("loading the passages of %s: %w", instance, err)
		}
		if err := json.Unmarshal([]byte(headings), &p.Headings); err != nil {
			return nil, fmt.Errorf("loading the passages of %s: headings of %s: %w", instance, src, err)
		}
		p.Vector = DecodeVector(vector)
		// Two reads, outside a transaction: a document written between
		// them may be read with its new passages, or none, under its old
		// revision; its revision having moved, the next load reads it again.
		if i, ok := at[src]; ok {
			out[i].Passages = append(out[i].Passages, p)
		}
	}
	return out, rows.Err()
}

// bump moves the instance's generation in tx and returns it; on
// PostgreSQL it holds the row's lock to the commit, so that the writes of
// one instance run one after another.
func (s kbStore) bump(ctx context.Context, tx *sql.Tx, instance string) (int64, error) {
	var g int64
	err := tx.QueryRowContext(ctx, s.rebind(`INSERT INTO kb_generations (instance, generation) VALUES (?, 1)
		ON CONFLICT (instance) DO UPDATE SET generation = kb_generations.generation + 1 RETURNING generation`), instance).Scan(&g)
	return g, err
}

func (s kbStore) Put(ctx context.Context, instance string, d store.KBDocument) (bool, error) {
	wrote, err := s.write(ctx, instance, func(tx *sql.Tx, gen int64) (bool, error) {
		var hash string
		err := tx.QueryRowContext(ctx, s.rebind(`SELECT hash FROM kb_documents WHERE instance = ? AND source = ?`), instance, d.Source).Scan(&hash)
		switch {
		case err == nil && hash == d.Hash:
			return false, nil
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return false, err
		}
		kept, err := s.vectors(ctx, tx, instance, d.Source)
		if err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM kb_passages WHERE instance = ? AND source = ?`), instance, d.Source); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO kb_documents (instance, source, kind, title, body, hash, revision, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (instance, source) DO UPDATE SET kind = excluded.kind, title = excluded.title, body = excluded.body,
			hash = excluded.hash, revision = excluded.revision, updated_at = excluded.updated_at`),
			instance, d.Source, d.Kind, d.Title, d.Text, d.Hash, gen, time.Now().UnixMilli()); err != nil {
			return false, err
		}
		insert, err := tx.PrepareContext(ctx, s.rebind(`INSERT INTO kb_passages (instance, source, position, headings, body, hash, vector_key, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`))
		if err != nil {
			return false, err
		}
		defer insert.Close()
		for i, p := range d.Passages {
			headings, _ := json.Marshal(p.Headings)
			if p.Headings == nil {
				headings = []byte("[]")
			}
			vector := EncodeVector(p.Vector)
			if p.Vector == nil && p.VectorKey != "" {
				vector = kept[p.VectorKey]
			}
			if vector == nil {
				vector = []byte{}
			}
			if _, err := insert.ExecContext(ctx, instance, d.Source, i, string(headings), p.Text, p.Hash, p.VectorKey, vector); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return false, fmt.Errorf("storing %s of %s: %w", d.Source, instance, err)
	}
	return wrote, nil
}

// vectors returns the vectors of the passages of source, by their key.
func (s kbStore) vectors(ctx context.Context, tx *sql.Tx, instance, source string) (map[string][]byte, error) {
	rows, err := tx.QueryContext(ctx, s.rebind(`SELECT vector_key, vector FROM kb_passages WHERE instance = ? AND source = ? AND vector_key <> ''`), instance, source)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var key string
		var v []byte
		if err := rows.Scan(&key, &v); err != nil {
			return nil, err
		}
		if len(v) > 0 {
			out[key] = v
		}
	}
	return out, rows.Err()
}

func (s kbStore) Delete(ctx context.Context, instance, source string) (bool, error) {
	deleted, err := s.write(ctx, instance, func(tx *sql.Tx, _ int64) (bool, error) {
		res, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM kb_documents WHERE instance = ? AND source = ?`), instance, source)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return false, err
		}
		_, err = tx.ExecContext(ctx, s.rebind(`DELETE FROM kb_passages WHERE instance = ? AND source = ?`), instance, source)
		return err == nil, err
	})
	if err != nil {
		return false, fmt.Errorf("deleting %s of %s: %w", source, instance, err)
	}
	return deleted, nil
}

func (s kbStore) SetVectors(ctx context.Context, instance string, vs []store.KBVector) (int64, error) {
	var n int64
	_, err := s.write(ctx, instance, func(tx *sql.Tx, gen int64) (bool, error) {
		set, err := tx.PrepareContext(ctx, s.rebind(`UPDATE kb_passages SET vector_key = ?, vector = ? WHERE instance = ? AND source = ? AND hash = ?`))
		if err != nil {
			return false, err
		}
		defer set.Close()
		touched := map[string]bool{}
		for _, v := range vs {
			res, err := set.ExecContext(ctx, v.VectorKey, EncodeVector(v.Vector), instance, v.Source, v.Hash)
			if err != nil {
				return false, err
			}
			m, err := res.RowsAffected()
			if err != nil {
				return false, err
			}
			n += m
			if m > 0 {
				touched[v.Source] = true
			}
		}
		for src := range touched {
			if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE kb_documents SET revision = ?, updated_at = ? WHERE instance = ? AND source = ?`),
				gen, time.Now().UnixMilli(), instance, src); err != nil {
				return false, err
			}
		}
		return n > 0, nil
	})
	if err != nil {
		return 0, fmt.Errorf("storing the vectors of %s: %w", instance, err)
	}
	return n, nil
}

// write runs fn in a transaction that has moved the instance's
// generation to gen, committed when fn reports that it wrote, else rolled
// back with the generation.
func (s kbStore) write(ctx context.Context, instance string, fn func(tx *sql.Tx, gen int64) (bool, error)) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	gen, err := s.bump(ctx, tx, instance)
	if err != nil {
		return false, err
	}
	wrote, err := fn(tx, gen)
	if err != nil || !wrote {
		return false, err
	}
	return true, tx.Commit()
}

// EncodeVector is v as little-endian float32s, nil for nil.
func EncodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// DecodeVector reads EncodeVector's bytes, nil for none.
func DecodeVector(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

var _ store.KBStore = kbStore{}

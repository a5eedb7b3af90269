package sources

import (
	"context"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
)

// IndexStore is the share of kb of the instance id (connectors.Instance's
// Index), nil without kb.
func IndexStore(kb store.KBStore, id string) connectors.IndexStore {
	if kb == nil {
		return nil
	}
	return indexStore{kb, id}
}

// indexStore is one instance's documents of a store.KBStore.
type indexStore struct {
	kb       store.KBStore
	instance string
}

func (s indexStore) Generation(ctx context.Context) (int64, error) {
	return s.kb.Generation(ctx, s.instance)
}

func (s indexStore) Documents(ctx context.Context) ([]connectors.IndexedDocument, error) {
	docs, err := s.kb.Documents(ctx, s.instance)
	return fromStored(docs), err
}

func (s indexStore) Load(ctx context.Context, sources []string) ([]connectors.IndexedDocument, error) {
	docs, err := s.kb.Load(ctx, s.instance, sources)
	return fromStored(docs), err
}

func (s indexStore) Put(ctx context.Context, d connectors.IndexedDocument) (bool, error) {
	sd := store.KBDocument{Source: d.Source, Kind: d.Kind, Title: d.Title, Text: d.Text, Hash: d.Hash}
	for _, p := range d.Passages {
		sd.Passages = append(sd.Passages, store.KBPassage(p))
	}
	return s.kb.Put(ctx, s.instance, sd)
}

func (s indexStore) Delete(ctx context.Context, source string) (bool, error) {
	return s.kb.Delete(ctx, s.instance, source)
}

func (s indexStore) SetVectors(ctx context.Context, vs []connectors.PassageVector) error {
	out := make([]store.KBVector, len(vs))
	for i, v := range vs {
		out[i] = store.KBVector(v)
	}
	_, err := s.kb.SetVectors(ctx, s.instance, out)
	return err
}

func fromStored(docs []store.KBDocument) []connectors.IndexedDocument {
	out := make([]connectors.IndexedDocument, len(docs))
	for i, d := range docs {
		out[i] = connectors.IndexedDocument{Source: d.Source, Kind: d.Kind, Title: d.Title, Text: d.Text, Hash: d.Hash, Revision: d.Revision, Updated: d.Updated}
		for _, p := range d.Passages {
			out[i].Passages = append(out[i].Passages, connectors.IndexedPassage(p))
		}
	}
	return out
}

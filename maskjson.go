package legate

import (
	"bytes"
	"encoding/json"
)

// DecodedLeak reports whether raw, a JSON value, holds a secret once
// decoded, in a mix of escapes that no single form of it spells (a "/"
// escaped as \/ and a "+" as \u002b, say), and returns it re-encoded with
// the secrets masked. Only raw with escapes is decoded.
func (s *Secrets) DecodedLeak(raw []byte) ([]byte, bool) {
	if s.Empty() || !bytes.Contains(raw, []byte(`\u`)) && !bytes.Contains(raw, []byte(`\/`)) {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	canon, err := json.Marshal(v)
	if err != nil || !s.Contains(canon) {
		return nil, false
	}
	return s.Mask(canon, false), true
}

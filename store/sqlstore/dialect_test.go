package sqlstore

import "testing"

// A statement is written once with ? and numbered in order for a backend
// that numbers its placeholders; SQLite's is left as it is.
func TestRebind(t *testing.T) {
	const q = `UPDATE approvals SET state = ?, decided_at = ? WHERE id = ? AND (? = '' OR tenant = ?)`
	numbered := &Dialect{Numbered: true}
	if got, want := numbered.rebind(q), `UPDATE approvals SET state = $1, decided_at = $2 WHERE id = $3 AND ($4 = '' OR tenant = $5)`; got != want {
		t.Fatalf("numbered:\n got %s\nwant %s", got, want)
	}
	if got := (&Dialect{}).rebind(q); got != q {
		t.Fatalf("SQLite's statement changed: %s", got)
	}
	if got := numbered.rebind(`SELECT 1`); got != `SELECT 1` {
		t.Fatalf("a statement without placeholders changed: %s", got)
	}
}

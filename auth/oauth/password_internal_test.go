package oauth

import (
	"strings"
	"testing"
)

// A refusal of an unknown user costs what a known user's check costs: the
// dummy hash has the parameters of new hashes.
func TestDummyHashHasTheParametersOfNewHashes(t *testing.T) {
	params := func(encoded string) string {
		parts := strings.Split(encoded, "$")
		if len(parts) != 6 {
			t.Fatalf("not an encoded argon2id hash: %q", encoded)
		}
		return strings.Join(parts[:4], "$")
	}
	if got, want := params(dummyHash), params(HashPassword("x")); got != want {
		t.Errorf("dummyHash's parameters %s; new hashes have %s", got, want)
	}
	if CheckPassword(dummyHash, "legate: no such account, again") {
		t.Error("dummyHash takes a password other than its own")
	}
}

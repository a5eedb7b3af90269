package sqlbase_test

import (
	"errors"
	"testing"

	"github.com/legate-mcp/legate/connectors/sqlbase"
)

func TestCursorIsBoundAndSigned(t *testing.T) {
	a, b := sqlbase.NewSigner("pg"), sqlbase.NewSigner("pg")
	type state struct{ N int }
	cur, err := a.Seal("query", state{N: 7})
	if err != nil {
		t.Fatal(err)
	}
	var got state
	if err := a.Open("query", cur, &got); err != nil || got.N != 7 {
		t.Fatalf("own cursor: %v %+v", err, got)
	}
	tampered := []byte(cur)
	tampered[len(tampered)-1] ^= 1
	for name, open := range map[string]func() error{
		"other tool":             func() error { return a.Open("schema", cur, &got) },
		"other process, same id": func() error { return b.Open("query", cur, &got) },
		"other instance":         func() error { return sqlbase.NewSigner("other").Open("query", cur, &got) },
		"edited":                 func() error { return a.Open("query", string(tampered), &got) },
		"not base64":             func() error { return a.Open("query", "!!", &got) },
		"too short":              func() error { return a.Open("query", "abc", &got) },
	} {
		if err := open(); !errors.Is(err, sqlbase.ErrCursor) {
			t.Errorf("%s: %v, want ErrCursor", name, err)
		}
	}
}

func TestValues(t *testing.T) {
	for in, want := range map[string]any{"12.50": "12.50", "NaN": "NaN", "-Infinity": "-Infinity", "1e400": "1e400", "1.": "1."} {
		got := sqlbase.Decimal(in)
		if s, ok := got.(interface{ String() string }); ok {
			got = s.String()
		}
		if got != want {
			t.Errorf("Decimal(%q) = %v, want %v", in, got, want)
		}
	}
	for _, n := range []string{"12.50", "1e400", "-0.5"} {
		if _, isString := sqlbase.Decimal(n).(string); isString {
			t.Errorf("Decimal(%s) is a string, want a JSON number", n)
		}
	}
	if _, isString := sqlbase.Decimal("1.").(string); !isString {
		t.Error(`Decimal("1.") is a JSON number, but "1." is not valid JSON`)
	}
	if v := sqlbase.JSONValue([]byte(`{"a":1} x`)); v != `{"a":1} x` {
		t.Errorf("JSONValue of trailing garbage: %v", v)
	}
}

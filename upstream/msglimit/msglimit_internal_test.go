package msglimit

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// answeredID finds the id of a response from its start alone, wherever
// the members stand, and no id where the message is no response.
func TestAnsweredID(t *testing.T) {
	cases := map[string]struct{ msg, id string }{
		"id first":             {`{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"xxxx`, "7"},
		"string id, spaced":    {`{ "jsonrpc" : "2.0" , "id" : "a,\"}b" , "result": {"id": 9`, `"a,\"}b"`},
		"result first, cut":    {`{"result":{"content":[{"text":"xx`, ""},
		"result first, whole":  {`{"result":{"id":1,"x":[1,{"id":2}]},"jsonrpc":"2.0","id":-3}`, "-3"},
		"error":                {`{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":"e"}`, `"e"`},
		"a request":            {`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"x":"`, ""},
		"a notification":       {`{"jsonrpc":"2.0","method":"notifications/progress","params":{"`, ""},
		"object id":            {`{"jsonrpc":"2.0","id":{"a":1},"result":{`, ""},
		"null id":              {`{"jsonrpc":"2.0","id":null,"result":{`, ""},
		"an id nested only":    {`{"jsonrpc":"2.0","result":{"id":5}}`, ""},
		"not an object":        {`[{"id":1,"result":{}}]`, ""},
		"id longer than bound": {`{"id":"` + strings.Repeat("i", 300) + `","result":{}}`, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := string(answeredID([]byte(c.msg))); got != c.id {
				t.Fatalf("answeredID(%.60s) = %q, want %q", c.msg, got, c.id)
			}
		})
	}
}

// FuzzAnsweredID: on a whole response, the id found is the response's own.
func FuzzAnsweredID(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"result":{"a":"\"id\":2"},"id":"x\\"}`,
		`{"id":[1],"result":1}`, `{"error":{"code":1},"id":-0}`, `{"id":1,"id":2,"result":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := answeredID(b)
		var msg map[string]json.RawMessage
		if got == nil || json.Unmarshal(b, &msg) != nil {
			return
		}
		if _, ok := msg["method"]; ok {
			t.Fatalf("%s: an id for a request", b)
		}
		var want, have any
		json.Unmarshal(msg["id"], &want)
		json.Unmarshal(got, &have)
		if want != have {
			t.Fatalf("%s: id %s, want %s", b, got, msg["id"])
		}
	})
}

// A line under the limit passes as is; one over it is replaced by the
// error answering it, or dropped when it shows no id; what follows passes.
func TestLineLimit(t *testing.T) {
	big := strings.Repeat("z", 300)
	in := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"result":{"t":"` + big + `"},"jsonrpc":"2.0","id":2}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"t":"` + big + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	out, err := io.ReadAll(newLineLimit(io.NopCloser(strings.NewReader(in)), 100))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + string(tooLargeAnswer([]byte("2"))) + "\n" + `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n"
	if !bytes.Equal(out, []byte(want)) {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

package saasbench

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Each reader's raw read is a request the stand-in answers with the body
// the library reads: the least gateway makes the provider round trip the
// connector makes, not an error's.
func TestRawReadsAreAnsweredAsTheLibrarysReads(t *testing.T) {
	base, stop, err := standIn("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, r := range readers {
		rr := r.rawOn(base)
		req, err := http.NewRequest(rr.Method, rr.URL, strings.NewReader(rr.Body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range rr.Header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) < 200 {
			t.Errorf("%s: %s %s answered %s, %d bytes: %.200s", r.name, rr.Method, rr.URL, resp.Status, len(body), body)
		}
	}
}

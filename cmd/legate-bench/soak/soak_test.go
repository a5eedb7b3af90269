package soak

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func result(isError bool, text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// Each kind of call passes only with the outcome its fault must give: an
// injected fault is not mistaken for another, nor a refusal for a fault.
func TestClassify(t *testing.T) {
	const text = "x w1 s2 c3"
	open := result(true, "UPSTREAM_UNAVAILABLE: upstream up is unavailable: circuit open after repeated failures; retry later")
	for _, c := range []struct {
		kind string
		res  *mcp.CallToolResult
		err  error
		ok   bool
	}{
		{"call", result(false, text), nil, true},
		{keepAliveKind, result(false, text), nil, true},
		{"call", result(false, "other"), nil, false},
		{"call", result(true, text), nil, false},
		{"call", open, nil, false},
		{"call", nil, errors.New("connection reset"), false},
		{faultError, result(true, injectedError), nil, true},
		{faultError, result(false, injectedError), nil, false},
		{faultHang, result(true, "TIMEOUT: upstream up did not answer within 2s"), nil, true},
		{faultHang, result(true, "UPSTREAM_UNAVAILABLE: upstream up is unavailable: EOF"), nil, false},
		{faultDrop, result(true, "UPSTREAM_UNAVAILABLE: upstream up is unavailable: EOF"), nil, true},
		{faultDrop, open, nil, false},
		{faultDrop, result(true, "TIMEOUT: upstream up did not answer within 2s"), nil, false},
	} {
		if got := classify(c.kind, text, c.res, c.err); (got == "") != c.ok {
			t.Errorf("%s, %v %v: %q, want expected %v", c.kind, c.res, c.err, got, c.ok)
		}
	}
}

// The upstream reads the fault from a tools/call's text only.
func TestSoakFault(t *testing.T) {
	for body, want := range map[string]string{
		`{"method":"tools/call","params":{"arguments":{"text":"fault:hang w1 s1 c1"}}}`: faultHang,
		`{"method":"tools/call","params":{"arguments":{"text":"fault:drop w1 s1 c1"}}}`: faultDrop,
		`{"method":"tools/call","params":{"arguments":{"text":"fault:error w1"}}}`:      "", // the tool's own
		`{"method":"tools/call","params":{"arguments":{"text":"call fault:hang"}}}`:     "",
		`{"method":"ping","params":{"arguments":{"text":"fault:hang"}}}`:                "",
	} {
		if got := soakFault([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

// The faults are drawn at the configured shares.
func TestPickShares(t *testing.T) {
	c := &Config{errRate: 0.1, hangRate: 0.05, dropRate: 0.02}
	rng := rand.New(rand.NewPCG(1, 2))
	n := map[string]int{}
	for range 100000 {
		n[c.pick(rng)]++
	}
	for kind, share := range map[string]float64{faultError: 0.1, faultHang: 0.05, faultDrop: 0.02, "call": 0.83} {
		if got := float64(n[kind]) / 100000; got < share*0.9 || got > share*1.1 {
			t.Errorf("%s: share %.3f, want %.3f", kind, got, share)
		}
	}
}

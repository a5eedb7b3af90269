package google_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate/connectors"
)

// cpu is the process's CPU time so far, user and system: the stand-in's
// included, which both sides of the comparison share.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReadRange compares sheets_read_range through the connector
// (Tool.Run: arguments, the kit, the access token held, the ref, the
// model) with the same library reading the same range from the same
// stand-in directly, in the same run: blocks of calls of each, taken in
// turn, each first every other block, so that a machine busy with other
// work slows both alike. It
// reports each side's wall time and CPU per call, and the ratios of
// their throughputs: direct time / connector time (ratio) and direct CPU
// / connector CPU (cpu-ratio, steadier on a busy machine); 1 is parity.
func BenchmarkReadRange(b *testing.B) {
	s := newStandin(b)
	s.fill("sheet-1", "Sheet1", 20, 5)
	in := build(b, s, "google", "")
	var tool connectors.Tool
	for _, t := range in.c.Tools() {
		if t.Name == "sheets_read_range" {
			tool = t
		}
	}
	call := &connectors.Call{Tool: tool.Name, Args: json.RawMessage(`{"spreadsheet_id":"sheet-1","range":"Sheet1!A1:E"}`),
		Caller: connectors.Caller{Principal: "p", Tenant: "t1"}, Credentials: creds, Key: func() []byte { return in.key }}
	viaConnector := func() {
		res, err := tool.Run(context.Background(), call)
		if err != nil || !strings.Contains(res.Text, "Sheet1!A1:E20: 20 row(s)") {
			b.Fatal(err)
		}
	}
	// The connector asks for one window of 101 rows: the direct call asks
	// for the same range, with an access token from the same endpoint.
	conf := &oauth2.Config{ClientID: clientID, ClientSecret: clientSecret, Endpoint: oauth2.Endpoint{TokenURL: s.srv.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(tok), Base: http.DefaultTransport.(*http.Transport).Clone()}}
	api, err := sheets.NewService(context.Background(), option.WithHTTPClient(hc), option.WithEndpoint(s.srv.URL+"/"))
	if err != nil {
		b.Fatal(err)
	}
	direct := func() {
		vr, err := api.Spreadsheets.Values.Get("sheet-1", "Sheet1!A1:E101").ValueRenderOption("FORMATTED_VALUE").Context(context.Background()).Do()
		if err != nil || len(vr.Values) != 20 {
			b.Fatal(err)
		}
	}
	viaConnector()
	direct()

	const block = 50
	var wall, cpus [2]time.Duration
	b.ResetTimer()
	sides := []func(){viaConnector, direct}
	for done := 0; done < b.N; done += block {
		n := min(block, b.N-done)
		for i := range 2 {
			side := (done/block + i) % 2 // each side goes first every other block
			f := sides[side]
			t0, c0 := time.Now(), cpu()
			for range n {
				f()
			}
			wall[side] += time.Since(t0)
			cpus[side] += cpu() - c0
		}
	}
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(per(wall[0]), "connector-ns/call")
	b.ReportMetric(per(wall[1]), "direct-ns/call")
	b.ReportMetric(per(cpus[0]), "connector-cpu-ns/call")
	b.ReportMetric(per(cpus[1]), "direct-cpu-ns/call")
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "ratio")
	b.ReportMetric(float64(cpus[1])/float64(cpus[0]), "cpu-ratio")
}

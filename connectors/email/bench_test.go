package email_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// BenchmarkSearch compares a search page of 20 (of 200 messages) through
// the connector's Tool.Run with the same IMAP commands sent by go-imap
// directly on one open connection, against the same in-process server:
// EXAMINE, UID SEARCH, UID FETCH of the envelopes and structures, UID
// FETCH of the snippets' text parts. cpu-ns/op is the process's CPU time
// (user and system, the server's included) per call.
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 2000x ./connectors/email
func BenchmarkSearch(b *testing.B) {
	s := newStandin(b)
	for i := range 200 {
		s.seed(b, "INBOX", plain("bob@example.com", fmt.Sprintf("report %d", i), fmt.Sprintf("Body of report %d.", i), i), day.Add(time.Duration(i)*time.Minute))
	}
	b.Run("connector", func(b *testing.B) {
		in := build(b, s, "email", "")
		tool := in.tool(b, "search")
		call := &connectors.Call{Tool: "search", Args: json.RawMessage(`{"limit":20}`), Caller: connectors.Caller{Principal: "p", Tenant: "t1"},
			Credentials: in.creds, Key: func() []byte { return in.key }}
		cpu(b, func() {
			res, err := tool.Run(context.Background(), call)
			if err != nil {
				b.Fatal(err)
			}
			if l, ok := res.Structured.(saas.List[model.Message]); !ok || len(l.Items) != 20 || l.Items[0].Snippet == "" {
				b.Fatalf("result %+v", res.Structured)
			}
		})
	})
	b.Run("go-imap", func(b *testing.B) {
		c, err := imapclient.DialInsecure(s.imapAddr, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if err := c.Login(user, imapPassword).Wait(); err != nil {
			b.Fatal(err)
		}
		cpu(b, func() {
			if _, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
				b.Fatal(err)
			}
			data, err := c.UIDSearch(&imap.SearchCriteria{}, nil).Wait()
			if err != nil {
				b.Fatal(err)
			}
			uids := data.AllUIDs()
			slices.SortFunc(uids, func(a, b imap.UID) int { return int(b) - int(a) })
			page := imap.UIDSetNum(uids[:20]...)
			bufs, err := c.Fetch(page, &imap.FetchOptions{UID: true, Envelope: true, Flags: true, InternalDate: true, RFC822Size: true,
				BodyStructure: &imap.FetchItemBodyStructure{Extended: true}}).Collect()
			if err != nil || len(bufs) != 20 {
				b.Fatal(err)
			}
			section := &imap.FetchItemBodySection{Part: []int{1}, Peek: true, Partial: &imap.SectionPartial{Size: 2048}}
			if _, err := c.Fetch(page, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// cpu runs fn b.N times and reports the process's CPU time per call.
func cpu(b *testing.B, fn func()) {
	before := rusage()
	b.ResetTimer()
	for range b.N {
		fn()
	}
	b.StopTimer()
	b.ReportMetric(float64(rusage()-before)/float64(b.N), "cpu-ns/op")
}

func rusage() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

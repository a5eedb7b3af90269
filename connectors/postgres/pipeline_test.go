package postgres_test

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// countingProxy forwards TCP connections to the fixture's server and
// counts the connections and the client's flights: each time the client
// sends after the server has answered, one round trip begins.
type countingProxy struct {
	addr    string
	conns   atomic.Int64
	flights atomic.Int64
}

func (f *fixture) proxy(t *testing.T) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			server, err := net.Dial("tcp", net.JoinHostPort(f.host, f.port))
			if err != nil {
				client.Close()
				continue
			}
			var answered atomic.Bool // the server spoke since the client last did
			answered.Store(true)
			wg.Go(func() {
				pipe(server, client, func() {
					if answered.Swap(false) {
						p.flights.Add(1)
					}
				})
			})
			wg.Go(func() { pipe(client, server, func() { answered.Store(true) }) })
		}
	})
	return p
}

// pipe copies src to dst, calling sent before each chunk it forwards, and
// closes both once src ends.
func pipe(dst, src net.Conn, sent func()) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			sent()
			dst.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// through builds an instance that reaches the fixture's database through
// p, with extra config lines.
func (f *fixture) through(t *testing.T, p *countingProxy, extra string) connectors.Connector {
	t.Helper()
	host, port, _ := net.SplitHostPort(p.addr)
	c := connectortest.Build(t, "postgres", "pg", fmt.Sprintf("host: %s\nport: %s\ndatabase: %s\nuser: %s\nsslmode: disable\nmax_conns: 1\n%s",
		host, port, f.db, f.user, extra))
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	return c
}

// A read opens its READ ONLY transaction, reads and rolls back in one
// round trip once its statement is described; a pool on the simple
// protocol takes three.
func TestReadIsOneRoundTrip(t *testing.T) {
	f := setup(t)
	for name, tc := range map[string]struct {
		simple bool
		want   int64
	}{
		"pipelined":       {false, 1},
		"simple protocol": {true, 3},
	} {
		t.Run(name, func(t *testing.T) {
			p := f.proxy(t)
			var c connectors.Connector
			if !tc.simple {
				c = f.through(t, p, "")
			} else {
				c = connectortest.Build(t, "postgres", "pg", fmt.Sprintf("dsn: postgres://%s@%s/%s?sslmode=disable&default_query_exec_mode=simple_protocol\nmax_conns: 1\n",
					f.user, p.addr, f.db))
				t.Cleanup(func() { c.(connectors.Closer).Close() })
			}
			const sql = `{"sql": "SELECT id, v, 12345678901234.5678::numeric(20,4) AS n FROM legate_canary WHERE id <= $1 ORDER BY id", "params": [3]}`
			if _, err := sqltest.Call(t, c, "query", sql, ""); err != nil { // connects, describes the statement
				t.Fatal(err)
			}
			before := p.flights.Load()
			const reads = 5
			for range reads {
				raw, err := sqltest.Call(t, c, "query", sql, "")
				if err != nil {
					t.Fatal(err)
				}
				r := decode[queryResult](t, raw)
				if r.Count != 3 || fmt.Sprint(r.Rows[2]) != "[3 row 3 12345678901234.5678]" {
					t.Fatalf("rows %v", r.Rows)
				}
			}
			if got := p.flights.Load() - before; got != reads*tc.want {
				t.Errorf("%d reads took %d round trips, want %d each", reads, got, tc.want)
			}
			if n := p.conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
		})
	}
}

// A read that fails leaves its connection out of any transaction, ready
// for the next read: the pool keeps it rather than closing it.
func TestFailedReadRollsBack(t *testing.T) {
	f := setup(t)
	p := f.proxy(t)
	c := f.through(t, p, "")
	for i := range 3 {
		if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT 1 / (id - id) FROM legate_canary"}`, ""); err == nil {
			t.Fatal("division by zero succeeded")
		}
		raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT count(*) AS n FROM legate_canary"}`, "")
		if err != nil {
			t.Fatalf("the read after failure %d: %v", i, err)
		}
		if r := decode[queryResult](t, raw); fmt.Sprint(r.Rows) != "[[250]]" {
			t.Fatalf("rows %v", r.Rows)
		}
	}
	if n := p.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a failed read's connection was dropped", n)
	}
}

// A column of a type pgx does not know (an enum) is named by the server.
func TestUnknownTypesAreNamed(t *testing.T) {
	f := setup(t)
	f.exec(t, `CREATE TYPE mood AS ENUM ('calm', 'busy')`)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT 'busy'::mood AS m"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	r := decode[queryResult](t, raw)
	if len(r.Columns) != 1 || r.Columns[0].Type != "mood" || fmt.Sprint(r.Rows) != "[[busy]]" {
		t.Fatalf("columns %v rows %v, want one mood column of busy", r.Columns, r.Rows)
	}
}

package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// TestTopQueriesPreloaded runs top_queries against a PostgreSQL cluster
// of the test's own, started with pg_stat_statements in
// shared_preload_libraries (which the shared test server may not have):
// a statement run 7 times through query is listed with its calls.
func TestTopQueriesPreloaded(t *testing.T) {
	port := preloadedCluster(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=postgres sslmode=disable", port))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{"CREATE EXTENSION pg_stat_statements",
		"CREATE TABLE legate_canary (id serial PRIMARY KEY, v text NOT NULL)",
		"INSERT INTO legate_canary (v) SELECT 'row ' || g FROM generate_series(1, 20) g"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c := connectortest.Build(t, "postgres", "pg", fmt.Sprintf("dsn: 'postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable'\n", port))
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	topQueriesLoaded(t, c)
}

// preloadedCluster initializes and starts a cluster on a free port,
// stopped and removed at the end; it skips when PostgreSQL's server
// programs are not installed.
func preloadedCluster(t *testing.T) int {
	t.Helper()
	bin := ""
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		bin = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(found) == 0 {
			t.Skip("PostgreSQL's initdb is not installed (postgresql package): cannot start a cluster that preloads pg_stat_statements")
		}
		bin = filepath.Dir(found[len(found)-1])
	}
	dir, err := os.MkdirTemp("", "legate-pgss-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// initdb refuses to run as root: run the server programs as postgres.
	run := func(args ...string) *exec.Cmd { return exec.Command(args[0], args[1:]...) }
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root with no postgres user to run initdb as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		run = func(args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	data := filepath.Join(dir, "data")
	if out, err := run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c shared_preload_libraries=pg_stat_statements", port, dir)
	if out, err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-w", "-l", filepath.Join(dir, "log"), "-o", opts, "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() { run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop").Run() })
	return port
}

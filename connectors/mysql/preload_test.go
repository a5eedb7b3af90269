package mysql_test

import (
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// TestTopQueriesPerformanceSchema runs top_queries against a MariaDB
// server of the test's own, started with performance_schema=ON (which the
// shared test server, like MariaDB's default, has off): a statement an
// application ran 7 times is listed with its calls and rows.
func TestTopQueriesPerformanceSchema(t *testing.T) {
	port := performanceSchemaServer(t)
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE DATABASE app", "CREATE TABLE app.legate_canary (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100) NOT NULL)",
		"INSERT INTO app.legate_canary (v) SELECT CONCAT('row ', seq) FROM app.seq_1_to_20"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c := connectortest.Build(t, "mysql", "my", fmt.Sprintf("dsn: 'root@tcp(127.0.0.1:%d)/app?tls=false'\n", port))
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	// An application's statements, sent as text: MariaDB's digests leave
	// out server-side prepared statements, which query's are.
	for range 7 {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) AS legate_top FROM app.legate_canary WHERE id > 3").Scan(&n); err != nil || n != 17 {
			t.Fatalf("%d, %v", n, err)
		}
	}
	raw, err := sqltest.Call(t, c, "top_queries", `{"order_by": "calls", "limit": 100}`, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range decode[sqlbase.TopQueriesResult](t, raw).Queries {
		if strings.Contains(q.Query, "legate_top") && q.Calls == 7 && q.Rows == 7 && q.TotalMillis > 0 {
			return
		}
	}
	t.Fatalf("the statement run 7 times is not listed: %s", raw)
}

// performanceSchemaServer initializes and starts a MariaDB server on a
// free port with performance_schema on, shut down and removed at the
// end; it skips when MariaDB's server programs are not installed.
func performanceSchemaServer(t *testing.T) int {
	t.Helper()
	install, err1 := exec.LookPath("mariadb-install-db")
	server, err2 := exec.LookPath("mariadbd")
	if err1 != nil || err2 != nil {
		if server, err2 = exec.LookPath("/usr/sbin/mariadbd"); err1 != nil || err2 != nil {
			t.Skip("mariadb-install-db and mariadbd are not installed (mariadb-server package): cannot start a server with performance_schema on")
		}
	}
	dir, err := os.MkdirTemp("", "legate-myps-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(install, "--no-defaults", "--datadir="+data, "--user="+currentUser(),
		"--auth-root-authentication-method=normal").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(server, "--no-defaults", "--datadir="+data, "--user="+currentUser(), "--bind-address=127.0.0.1",
		fmt.Sprintf("--port=%d", port), "--socket="+filepath.Join(dir, "sock"), "--performance-schema=ON", "--skip-log-bin")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-ended
	})
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Wait for it to accept connections; the test's deadline bounds this.
	for db.Ping() != nil {
		select {
		case <-ended:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("mariadbd ended:\n%s", b)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return port
}

// currentUser is the user mariadbd runs as: the test's own.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

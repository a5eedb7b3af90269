package inspect

import (
	"context"
	"slices"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

type healthArgs struct {
	MinSeconds *float64 `json:"min_seconds,omitempty" jsonschema:"A statement running at least this long is long-running (default 30)"`
}

// The statements of health, each read on its own so that one the user may
// not read leaves a note and the others still answer. A user without the
// PROCESS privilege sees only its own sessions and no InnoDB transactions.
const (
	hitSQL  = `SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_reads')`
	longSQL = `SELECT ID, COALESCE(USER, ''), COALESCE(STATE, ''), TIME, LEFT(INFO, 1000) FROM information_schema.PROCESSLIST
		WHERE COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump') AND INFO IS NOT NULL AND ID <> CONNECTION_ID() AND TIME >= ?
		ORDER BY TIME DESC LIMIT 20`
	// Sessions waiting for a row lock, and the sessions whose transactions
	// hold it: MariaDB's INNODB_LOCK_WAITS, MySQL 8's data_lock_waits.
	mariaWaitsSQL = `SELECT w.trx_mysql_thread_id, COALESCE(p.USER, ''), COALESCE(w.trx_state, ''),
		TIMESTAMPDIFF(MICROSECOND, w.trx_wait_started, NOW(6)) / 1000000, LEFT(COALESCE(w.trx_query, ''), 1000), b.trx_mysql_thread_id
		FROM information_schema.INNODB_LOCK_WAITS lw
		JOIN information_schema.INNODB_TRX w ON w.trx_id = lw.requesting_trx_id
		JOIN information_schema.INNODB_TRX b ON b.trx_id = lw.blocking_trx_id
		LEFT JOIN information_schema.PROCESSLIST p ON p.ID = w.trx_mysql_thread_id
		ORDER BY w.trx_wait_started, 1, 6 LIMIT 100`
	mysqlWaitsSQL = `SELECT w.trx_mysql_thread_id, COALESCE(p.USER, ''), COALESCE(w.trx_state, ''),
		TIMESTAMPDIFF(MICROSECOND, w.trx_wait_started, NOW(6)) / 1000000, LEFT(COALESCE(w.trx_query, ''), 1000), b.trx_mysql_thread_id
		FROM performance_schema.data_lock_waits lw
		JOIN information_schema.INNODB_TRX w ON w.trx_id = lw.REQUESTING_ENGINE_TRANSACTION_ID
		JOIN information_schema.INNODB_TRX b ON b.trx_id = lw.BLOCKING_ENGINE_TRANSACTION_ID
		LEFT JOIN information_schema.PROCESSLIST p ON p.ID = w.trx_mysql_thread_id
		ORDER BY w.trx_wait_started, 1, 6 LIMIT 100`
	// Free space inside each table's data files, which OPTIMIZE TABLE
	// gives back.
	bloatSQL = `SELECT TABLE_SCHEMA, TABLE_NAME, DATA_LENGTH + INDEX_LENGTH, DATA_FREE FROM information_schema.TABLES
		WHERE TABLE_TYPE = 'BASE TABLE' AND DATA_FREE > 0 AND TABLE_SCHEMA NOT IN ('mysql', 'sys', 'performance_schema', 'information_schema')
		ORDER BY DATA_FREE DESC, 1, 2 LIMIT 10`
	replicasSQL = `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND IN ('Binlog Dump', 'Binlog Dump GTID')`
)

func (t *tools) health(ctx context.Context, call *connectors.Call, in *healthArgs) (*legate.Result, error) {
	minSec := 30.0
	if in.MinSeconds != nil {
		minSec = *in.MinSeconds
	}
	if minSec < 0 {
		return nil, invalid("min_seconds must not be negative")
	}
	res := &sqlbase.HealthResult{LongRunning: []sqlbase.Activity{}, Blocked: []sqlbase.Activity{}, Bloat: []sqlbase.Bloat{}}
	note := func(what string, err error) error {
		var le *legate.Error
		if le, _ = err.(*legate.Error); le != nil && (le.Code == legate.CodePermissionDenied || le.Code == legate.CodeNotFound ||
			le.Code == legate.CodeInvalidArgument) {
			res.Notes = append(res.Notes, what+": "+le.Message)
			return nil
		}
		return err
	}
	// The first read, of status every user may read, ends the call on any
	// failure: the instance's user check, the connection, credentials.
	rows, err := t.read(ctx, call, hitSQL)
	if err != nil {
		return nil, err
	}
	var requests, reads float64
	for _, r := range rows.Values {
		switch strings.ToLower(str(r[0])) {
		case "innodb_buffer_pool_read_requests":
			requests = num(r[1])
		case "innodb_buffer_pool_reads":
			reads = num(r[1])
		}
	}
	if requests > 0 {
		v := 1 - reads/requests
		res.CacheHitRatio = &v
	}
	if rows, err := t.read(ctx, call, longSQL, minSec); err != nil {
		if err := note("long-running statements", err); err != nil {
			return nil, err
		}
	} else {
		for _, r := range rows.Values {
			res.LongRunning = append(res.LongRunning, sqlbase.Activity{ID: integer(r[0]), User: str(r[1]), State: str(r[2]),
				Seconds: num(r[3]), Query: str(r[4])})
		}
	}
	if err := t.lockWaits(ctx, call, res); err != nil {
		if err := note("lock waits", err); err != nil {
			return nil, err
		}
	}
	if rows, err := t.read(ctx, call, bloatSQL); err != nil {
		if err := note("bloat", err); err != nil {
			return nil, err
		}
	} else {
		for _, r := range rows.Values {
			b := sqlbase.Bloat{Schema: str(r[0]), Table: str(r[1]), TableBytes: integer(r[2]), EstimatedBytes: integer(r[3])}
			if b.TableBytes > 0 {
				b.Ratio = float64(b.EstimatedBytes) / float64(b.TableBytes)
			}
			res.Bloat = append(res.Bloat, b)
		}
	}
	if err := t.replication(ctx, call, &res.Replication); err != nil {
		if err := note("replication", err); err != nil {
			return nil, err
		}
	}
	return &legate.Result{Structured: res}, nil
}

// lockWaits fills the blocked sessions, one entry per waiting session
// with every session blocking it.
func (t *tools) lockWaits(ctx context.Context, call *connectors.Call, res *sqlbase.HealthResult) error {
	maria, err := t.mariaDB(ctx, call)
	if err != nil {
		return err
	}
	rows, err := t.read(ctx, call, map[bool]string{true: mariaWaitsSQL, false: mysqlWaitsSQL}[maria])
	if err != nil {
		return err
	}
	for _, r := range rows.Values {
		id := integer(r[0])
		i := slices.IndexFunc(res.Blocked, func(a sqlbase.Activity) bool { return a.ID == id })
		if i < 0 {
			res.Blocked = append(res.Blocked, sqlbase.Activity{ID: id, User: str(r[1]), State: str(r[2]), Seconds: num(r[3]),
				Query: str(r[4]), WaitEvent: "row lock"})
			i = len(res.Blocked) - 1
		}
		if by := integer(r[5]); !slices.Contains(res.Blocked[i].BlockedBy, by) {
			res.Blocked[i].BlockedBy = append(res.Blocked[i].BlockedBy, by)
		}
	}
	return nil
}

// replication fills rep from SHOW REPLICA STATUS (a replica's source and
// lag) and the binlog dump threads (replicas reading from this server).
func (t *tools) replication(ctx context.Context, call *connectors.Call, rep *sqlbase.Replication) error {
	rows, err := t.read(ctx, call, "SHOW REPLICA STATUS")
	if err != nil {
		return err
	}
	for _, r := range rows.Values {
		rep.Role = "replica"
		for i, c := range rows.Columns {
			switch c.Name {
			case "Seconds_Behind_Master", "Seconds_Behind_Source":
				if r[i] != nil {
					v := num(r[i])
					rep.LagSeconds = &v
				} else {
					rep.Note = "replication is not running (Seconds_Behind_Source is NULL)"
				}
			}
		}
	}
	if rows, err = t.read(ctx, call, replicasSQL); err != nil {
		return err
	}
	if n := integer(rows.Values[0][0]); n > 0 && rep.Role == "" {
		rep.Role = "primary"
		rep.Note = "replicas are reading this server's binary log"
	}
	if rep.Role == "" {
		rep.Role, rep.Note = "standalone", "this server replicates from no source and no replica reads from it"
	}
	return nil
}

package inspect

import (
	"context"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

type healthArgs struct {
	MinSeconds *float64 `json:"min_seconds,omitempty" jsonschema:"A statement running at least this long is long-running (default 30)"`
}

// The statements of health, each read on its own so that one the role may
// not read leaves a note and the others still answer.
const (
	hitSQL = `SELECT sum(blks_hit)::float8 / nullif(sum(blks_hit) + sum(blks_read), 0)
		FROM pg_catalog.pg_stat_database WHERE datname = current_database()`
	longSQL = `SELECT pid, coalesce(usename, ''), coalesce(state, ''),
		extract(epoch FROM clock_timestamp() - query_start)::float8, left(query, 1000),
		coalesce(wait_event_type || ':' || wait_event, '')
		FROM pg_catalog.pg_stat_activity
		WHERE state <> 'idle' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
		  AND clock_timestamp() - query_start >= make_interval(secs => $1)
		ORDER BY query_start LIMIT 20`
	blockedSQL = `SELECT pid, coalesce(usename, ''), coalesce(state, ''),
		extract(epoch FROM clock_timestamp() - coalesce(state_change, query_start))::float8, left(query, 1000),
		coalesce(wait_event_type || ':' || wait_event, ''), pg_blocking_pids(pid)::int8[]
		FROM pg_catalog.pg_stat_activity
		WHERE cardinality(pg_blocking_pids(pid)) > 0
		ORDER BY state_change LIMIT 20`
	// The well-known table bloat estimate (ioguix/pgsql-bloat-estimation):
	// the pages the planner's statistics say the live rows need, at the
	// table's fillfactor, against the pages the table has; tables never
	// analyzed, or with a name column, are left out as it cannot judge them.
	bloatSQL = `SELECT schemaname, tblname, (bs * tblpages)::int8, ((tblpages - est_tblpages_ff) * bs)::int8
FROM (
  SELECT ceil(reltuples / ((bs - page_hdr) * fillfactor / (tpl_size * 100))) + ceil(toasttuples / 4) AS est_tblpages_ff,
    tblpages, bs, schemaname, tblname, is_na
  FROM (
    SELECT (4 + tpl_hdr_size + tpl_data_size + (2 * ma)
        - CASE WHEN tpl_hdr_size % ma = 0 THEN ma ELSE tpl_hdr_size % ma END
        - CASE WHEN ceil(tpl_data_size)::int % ma = 0 THEN ma ELSE ceil(tpl_data_size)::int % ma END) AS tpl_size,
      heappages + toastpages AS tblpages, reltuples, toasttuples, bs, page_hdr, schemaname, tblname, fillfactor, is_na
    FROM (
      SELECT ns.nspname AS schemaname, tbl.relname AS tblname, tbl.reltuples, tbl.relpages AS heappages,
        coalesce(toast.relpages, 0) AS toastpages, coalesce(toast.reltuples, 0) AS toasttuples,
        coalesce(substring(array_to_string(tbl.reloptions, ' ') FROM 'fillfactor=([0-9]+)')::smallint, 100) AS fillfactor,
        current_setting('block_size')::numeric AS bs, 8 AS ma, 24 AS page_hdr,
        23 + CASE WHEN max(coalesce(s.null_frac, 0)) > 0 THEN (7 + count(s.attname)) / 8 ELSE 0::int END AS tpl_hdr_size,
        sum((1 - coalesce(s.null_frac, 0)) * coalesce(s.avg_width, 0)) AS tpl_data_size,
        bool_or(att.atttypid = 'pg_catalog.name'::regtype)
          OR sum(CASE WHEN att.attnum > 0 THEN 1 ELSE 0 END) <> count(s.attname) AS is_na
      FROM pg_catalog.pg_attribute att
      JOIN pg_catalog.pg_class tbl ON att.attrelid = tbl.oid
      JOIN pg_catalog.pg_namespace ns ON ns.oid = tbl.relnamespace
      LEFT JOIN pg_catalog.pg_stats s ON s.schemaname = ns.nspname AND s.tablename = tbl.relname
        AND NOT s.inherited AND s.attname = att.attname
      LEFT JOIN pg_catalog.pg_class toast ON tbl.reltoastrelid = toast.oid
      WHERE NOT att.attisdropped AND att.attnum > 0 AND tbl.relkind IN ('r', 'm') AND tbl.reltuples > 0
        AND ns.nspname NOT IN ('pg_catalog', 'information_schema') AND ns.nspname !~ '^pg_toast'
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    ) AS s
  ) AS s2
) AS s3
WHERE NOT is_na AND tblpages > est_tblpages_ff
ORDER BY 4 DESC, 1, 2 LIMIT 10`
	recoverySQL = `SELECT pg_is_in_recovery(),
		CASE WHEN pg_is_in_recovery() THEN extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 END`
	replicasSQL = `SELECT coalesce(application_name, ''), coalesce(state, ''), extract(epoch FROM replay_lag)::float8
		FROM pg_catalog.pg_stat_replication ORDER BY 1`
	slotsSQL = `SELECT slot_name::text, slot_type,  active,
		CASE WHEN restart_lsn IS NOT NULL AND NOT pg_is_in_recovery() THEN pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::int8 END
		FROM pg_catalog.pg_replication_slots ORDER BY 1`
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
	// note keeps a section's failure as a note; a failure of the
	// connection or the credentials ends the call.
	note := func(what string, err error) error {
		var le *legate.Error
		if le, _ = err.(*legate.Error); le != nil && (le.Code == legate.CodePermissionDenied || le.Code == legate.CodeInvalidArgument ||
			le.Code == legate.CodeNotFound) {
			res.Notes = append(res.Notes, what+": "+le.Message)
			return nil
		}
		return err
	}
	// The first read, of a view every role may read, ends the call on any
	// failure: the instance's role check, the connection, credentials.
	if rows, err := t.read(ctx, call, hitSQL); err != nil {
		return nil, err
	} else if len(rows.Values) == 1 && rows.Values[0][0] != nil {
		v := num(rows.Values[0][0])
		res.CacheHitRatio = &v
	}
	if rows, err := t.read(ctx, call, longSQL, minSec); err != nil {
		if err := note("long-running statements", err); err != nil {
			return nil, err
		}
	} else {
		for _, r := range rows.Values {
			res.LongRunning = append(res.LongRunning, activity(r))
		}
	}
	if rows, err := t.read(ctx, call, blockedSQL); err != nil {
		if err := note("blocked sessions", err); err != nil {
			return nil, err
		}
	} else {
		for _, r := range rows.Values {
			a := activity(r)
			ids, _ := r[6].([]any)
			for _, id := range ids {
				a.BlockedBy = append(a.BlockedBy, integer(id))
			}
			res.Blocked = append(res.Blocked, a)
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

// activity reads a row of longSQL or blockedSQL.
func activity(r []any) sqlbase.Activity {
	return sqlbase.Activity{ID: integer(r[0]), User: str(r[1]), State: str(r[2]), Seconds: num(r[3]), Query: str(r[4]),
		WaitEvent: str(r[5])}
}

// replication fills rep: a replica's lag behind its primary, or a
// primary's replicas and slots, or that there are none.
func (t *tools) replication(ctx context.Context, call *connectors.Call, rep *sqlbase.Replication) error {
	rows, err := t.read(ctx, call, recoverySQL)
	if err != nil {
		return err
	}
	if rows.Values[0][0] == true {
		rep.Role = "replica"
		if lag := rows.Values[0][1]; lag != nil {
			v := num(lag)
			rep.LagSeconds = &v
		} else {
			rep.Note = "no transaction replayed yet"
		}
	}
	if rows, err = t.read(ctx, call, replicasSQL); err != nil {
		return err
	}
	for _, r := range rows.Values {
		rp := sqlbase.Replica{Name: str(r[0]), State: str(r[1])}
		if r[2] != nil {
			v := num(r[2])
			rp.LagSeconds = &v
		}
		rep.Replicas = append(rep.Replicas, rp)
	}
	if rows, err = t.read(ctx, call, slotsSQL); err != nil {
		return err
	}
	for _, r := range rows.Values {
		s := sqlbase.RepSlot{Name: str(r[0]), Type: str(r[1]), Active: r[2] == true}
		if r[3] != nil {
			v := integer(r[3])
			s.RetainedBytes = &v
		}
		rep.Slots = append(rep.Slots, s)
	}
	switch {
	case rep.Role == "replica":
	case len(rep.Replicas) > 0 || len(rep.Slots) > 0:
		rep.Role = "primary"
	default:
		rep.Role = "standalone"
		rep.Note = "no replicas stream from this server and it has no replication slots"
	}
	return nil
}

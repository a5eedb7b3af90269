package sqlbase

import (
	"context"
	"log/slog"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// CheckPrivileged decides whether a read_only instance of type typ may use
// a connection as role, which holds privileges (empty when none of those
// that reach past the database: a superuser, server files, server
// programs). A read_only instance promises reads; a privileged role can
// defeat every layer under the guard (COPY … TO PROGRAM, pg_read_file,
// lo_export, INTO OUTFILE run inside a READ ONLY transaction), so such an
// instance refuses to start — every call and connection test fails with
// PERMISSION_DENIED — unless the operator set allow_privileged_role, and
// then each start logs a warning naming the role and its privileges.
func CheckPrivileged(ctx context.Context, typ, instance, role string, privileges []string, allowed bool) error {
	if len(privileges) == 0 {
		return nil
	}
	held := strings.Join(privileges, ", ")
	if !allowed {
		return legate.Errorf(legate.CodePermissionDenied, "%s: the read_only instance %s connects as %q, which holds %s: "+
			"connect as a read-only role (README), or set allow_privileged_role: true to run it anyway", typ, instance, role, held)
	}
	slog.Default().WarnContext(ctx, typ+": read_only instance connects as a privileged role (allow_privileged_role is set); "+
		"only the SQL guard stands between a query and the server's files and programs",
		"instance", instance, "role", role, "privileges", held)
	connectors.Reportf(ctx, "warning: role %s holds %s (allow_privileged_role: true)", role, held)
	return nil
}

package postgres

import (
	"database/sql/driver"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// jsonValue is a value pgx decoded, in the JSON form every SQL connector
// gives: numbers (numeric exactly), RFC 3339 times (dates as full dates),
// base64 bytea, UUIDs and network addresses as text, JSON as JSON,
// arrays as arrays, NULL as nil.
func jsonValue(v any, typ string) any {
	switch x := v.(type) {
	case nil, bool, string, int64, map[string]any:
		return x
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int8:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return sqlbase.Float(float64(x))
	case float64:
		return sqlbase.Float(x)
	case time.Time:
		return sqlbase.Time(x, typ == "date")
	case []byte:
		return sqlbase.Bytes(x)
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case pgtype.Numeric:
		dv, err := x.Value()
		if s, ok := dv.(string); ok && err == nil {
			return sqlbase.Decimal(s)
		}
		return nil
	case netip.Prefix:
		return x.String()
	case netip.Addr:
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e, elem(typ))
		}
		return out
	case driver.Valuer:
		dv, err := x.Value()
		if err != nil {
			return fmt.Sprint(v)
		}
		if _, again := dv.(driver.Valuer); again {
			return fmt.Sprint(dv)
		}
		return jsonValue(dv, typ)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// elem is the element type of an array type's name (_date → date).
func elem(typ string) string {
	if len(typ) > 1 && typ[0] == '_' {
		return typ[1:]
	}
	return typ
}

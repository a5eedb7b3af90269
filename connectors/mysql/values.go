package mysql

import (
	"fmt"
	"strings"
	"time"

	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// jsonValue is a value the driver scanned (binary protocol: integers,
// floats, times, bytes), in the JSON form every SQL connector gives, and
// the value a keyset cursor binds again (text as string, DECIMAL as its
// exact text).
func jsonValue(v any, typ string) (out, raw any) {
	switch x := v.(type) {
	case nil, int64, uint64, string:
		return x, x
	case int32:
		return int64(x), int64(x)
	case float32:
		return sqlbase.Float(float64(x)), float64(x)
	case float64:
		return sqlbase.Float(x), x
	case time.Time:
		return sqlbase.Time(x, typ == "DATE"), x
	case []byte:
		switch {
		case typ == "DECIMAL":
			return sqlbase.Decimal(string(x)), string(x)
		case typ == "JSON":
			return sqlbase.JSONValue(x), string(x)
		case binaryType(typ):
			return sqlbase.Bytes(x), append([]byte{}, x...)
		}
		return string(x), string(x)
	}
	return fmt.Sprint(v), fmt.Sprint(v)
}

// binaryType reports the types whose bytes are binary data.
func binaryType(typ string) bool {
	return strings.HasSuffix(typ, "BLOB") || typ == "BINARY" || typ == "VARBINARY" || typ == "BIT" || typ == "GEOMETRY"
}

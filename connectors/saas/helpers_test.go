package saas_test

import (
	"encoding/json"

	"github.com/legate-mcp/legate/connectors/httpkit"
)

func httpkitRate(perSecond float64) httpkit.RateLimit {
	return httpkit.RateLimit{PerSecond: perSecond, Burst: 1}
}

// jsonSyntax is what decoding a body that is not JSON fails with.
type jsonSyntax = json.SyntaxError

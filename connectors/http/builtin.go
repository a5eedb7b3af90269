package httpconn

import (
	"errors"
	"fmt"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// The gateway serves http.request without configuration: registered here,
// it exists in any binary that includes this type.
func init() {
	connectors.RegisterBuiltin(connectors.Builtin{Instance: "http", Tool: Builtin()})
}

// builtinBlocked rewrites the refusal of a blocked address for the built-in
// tool, which has no configuration: the refusal of a connector instance
// tells to set allow_private_networks, which this tool cannot have, so
// this one says what can be done instead. Other errors pass as they are.
func builtinBlocked(err error) error {
	var le *legate.Error
	var be *netguard.BlockedError
	if !errors.As(err, &le) || !errors.As(le.Err, &be) {
		return err
	}
	target := be.Addr.String()
	if be.Host != "" && be.Host != target {
		target = fmt.Sprintf("%s (%s)", be.Host, be.Addr)
	}
	return &legate.Error{Code: le.Code, Err: le.Err, Message: fmt.Sprintf("http: refused to connect to %s: %s addresses are blocked "+
		"to prevent server-side request forgery, and the built-in http.request tool never reaches them; to call an internal "+
		"service, configure an http connector instance for it with allow_private_networks: true "+
		"(legate connector add NAME --type http --set base_url=URL --set allow_private_networks=true) and use that instance's tools",
		target, be.Reason)}
}

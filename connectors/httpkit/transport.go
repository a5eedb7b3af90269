package httpkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// TransportError maps a failure to get an answer (an error from
// http.Client.Do or from reading a body) to a canonical error whose message
// is prefix, ": " and what failed. The request's URL, which may hold a
// secret, is left out.
//
//   - an address netguard refused: PERMISSION_DENIED, saying which setting
//     allows it; not worth retrying;
//   - too many redirects: ADAPTER_MAPPING_ERROR;
//   - a host name that does not resolve (DNS answered "no such host"):
//     TRANSIENT, naming the host and never the resolver, and saying it
//     could not be resolved. It is not NOT_FOUND, which says the object
//     asked for does not exist: the provider was never reached. The name
//     may be wrong in the configuration, or the resolver may not know it
//     yet; the request is not retried at once ([Retry]);
//   - the call cancelled: TRANSIENT;
//   - a deadline or a network timeout: TIMEOUT;
//   - anything else (a resolver that failed to answer, refused or reset
//     connections): TRANSIENT.
//
// An error that has its code already (a [Limiter]'s refusal, or one a
// connector's RoundTripper returned) is returned as it is.
func TransportError(ctx context.Context, err error, prefix string) *legate.Error {
	if le := (*legate.Error)(nil); errors.As(err, &le) {
		return le
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	e := &legate.Error{Code: legate.CodeTransient, Err: err}
	var ne net.Error
	var be *netguard.BlockedError
	var dns *net.DNSError
	switch {
	case errors.As(err, &be):
		e.Code, e.Message = legate.CodePermissionDenied, be.Error()
	case errors.Is(err, netguard.ErrBlocked):
		e.Code, e.Message = legate.CodePermissionDenied, "address refused; set allow_private_networks: true to allow private networks"
	case errors.Is(err, netguard.ErrTooManyRedirects):
		e.Code, e.Message = legate.CodeAdapterMapping, inner.Error()
	case errors.As(err, &dns) && dns.IsNotFound:
		e.Message = fmt.Sprintf("host %q could not be resolved (no such host): check the host name in the instance's configuration", dns.Name)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		e.Message = "request cancelled"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		e.Code, e.Message = legate.CodeTimeout, "request timed out"
	default:
		e.Message = "request failed: " + inner.Error()
	}
	e.Message = prefix + ": " + e.Message
	return e
}

// notSent reports whether err proves that the request never reached the
// server: the name did not resolve, or the connection was never made. Any
// later failure (a reset, a timeout waiting for the answer) may come after
// the server did the work.
func notSent(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

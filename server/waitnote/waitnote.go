// Package waitnote tells a client whose call is held for approval what it
// waits for: a progress notification at once and then each second (when
// the call carried a progressToken), and one log message (when the client
// set a log level), naming the approval and how to decide it, so that a
// held write does not look hung until APPROVAL_PENDING.
package waitnote

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Message says that a call waits for approval id, how to decide it (the
// CLI, and the panel's inbox at panel when it is served), and what comes
// after wait.
func Message(id string, wait time.Duration, panel string) string {
	how := fmt.Sprintf("legate approvals approve %s", id)
	if panel != "" {
		how += " or the panel's inbox, " + panel
	}
	return fmt.Sprintf("waiting for approval %s: approve it with %s; after %s this call returns APPROVAL_PENDING with the approval id, and once approved it runs once", id, how, wait)
}

// PanelURL is the URL of the inbox of a panel listening on addr, "" for
// none; an unspecified host is named as localhost.
func PanelURL(addr string) string {
	if addr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/inbox"
}

// Start tells ss, the session of a held call, msg at once, and returns
// the tick that repeats the progress notification: the progress is the
// seconds waited, the total the seconds the call waits at most. Without a
// session it does nothing.
func Start(ctx context.Context, ss *mcp.ServerSession, token any, wait time.Duration, msg string) (tick func()) {
	if ss == nil {
		return func() {}
	}
	// Sent only if the client set a level (logging/setLevel) of info or lower.
	ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "legate.approvals", Data: msg})
	if token == nil {
		return func() {}
	}
	start := time.Now()
	tick = func() {
		ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: time.Since(start).Seconds(), Total: wait.Seconds(), Message: msg,
		})
	}
	tick()
	return tick
}

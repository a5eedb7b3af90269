package policy

import "time"

// SetHeartbeat sets how often a running call's heartbeat is written
// (HeartbeatInterval otherwise), for tests.
func SetHeartbeat(in *Inbox, d time.Duration) { in.beat = d }

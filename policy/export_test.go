package policy

import "time"

// SetHeartbeat sets how often a running call's heartbeat is written
// (HeartbeatInterval otherwise), for tests.
func SetHeartbeat(in *Inbox, d time.Duration) { in.beat = d }

// SetPoll sets how often a waiting call re-reads its request
// (PollInterval otherwise), for tests that must see it woken otherwise.
func SetPoll(in *Inbox, d time.Duration) { in.poll = d }

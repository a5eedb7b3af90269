package store

import "context"

// ApprovalWatcher is an optional ability of an ApprovalStore shared by
// several processes (the replicas of one deployment): it tells of state
// changes made by any of them, so that a call waiting on one replica
// wakes as soon as another decides, runs or finishes its request.
// policy.Inbox checks for it with a type assertion and, without it, polls.
type ApprovalWatcher interface {
	// Watch sends the id of each request whose state changed, until ctx
	// ends; then it closes the channel. An empty id means that any request
	// may have changed: the watch (re)started, and changes made while it
	// was not listening were not told. Delivery is best effort — a reader
	// must still re-read the request — and a slow reader delays the watch,
	// never the writers.
	Watch(ctx context.Context) <-chan string
}

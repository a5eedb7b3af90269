package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// watchRetry is how long a watch waits before it connects again after
// losing its connection.
const watchRetry = time.Second

// Watch listens, on a connection of its own outside the pool, for the
// notifications the approvals table's trigger sends on every state change
// (migration 1), and sends each approval id on the channel it returns.
// When the connection is lost it connects again, every watchRetry, and
// sends "" once listening again: whatever changed meanwhile was not told.
// The channel is closed when ctx ends.
func (s *Store) Watch(ctx context.Context) <-chan string { return s.watch(ctx, notifyChan) }

// WatchEvents is Watch for the events table's trigger (its migration):
// it sends the instance id of every event added, by any replica.
func (s *Store) WatchEvents(ctx context.Context) <-chan string { return s.watch(ctx, eventsChan) }

func (s *Store) watch(ctx context.Context, channel string) <-chan string {
	out := make(chan string, 64)
	go func() {
		defer close(out)
		for ctx.Err() == nil {
			s.listen(ctx, channel, out)
			select {
			case <-ctx.Done():
			case <-time.After(watchRetry):
			}
		}
	}()
	return out
}

// listen sends the notifications of one connection until it fails or ctx
// ends.
func (s *Store) listen(ctx context.Context, channel string, out chan<- string) {
	conn, err := pgx.ConnectConfig(ctx, s.conn.Copy())
	if err != nil {
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return
	}
	if !send(ctx, out, "") {
		return
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil || !send(ctx, out, n.Payload) {
			return
		}
	}
}

func send(ctx context.Context, out chan<- string, id string) bool {
	select {
	case out <- id:
		return true
	case <-ctx.Done():
		return false
	}
}

package sqlstore

import (
	"context"
	"strings"
	"time"
)

// insertChunk is the number of rows one INSERT writes: a statement per
// row costs more than the row itself.
const insertChunk = 64

// insertRows inserts n rows of cols columns, insertChunk rows a
// statement: head is the INSERT up to its VALUES, and row appends the
// values of row i to args. Its statements are prepared once
// (database.prepared): at most insertChunk of them for each head.
func insertRows(ctx context.Context, tx transaction, head string, cols, n int, row func(args []any, i int) []any) error {
	one := "(" + strings.Repeat("?, ", cols-1) + "?)"
	args := make([]any, 0, cols*min(n, insertChunk))
	for i := 0; i < n; {
		k := min(n-i, insertChunk)
		args = args[:0]
		for j := range k {
			args = row(args, i+j)
		}
		if _, err := tx.execPrepared(ctx, head+" VALUES "+strings.Repeat(one+", ", k-1)+one, args...); err != nil {
			return err
		}
		i += k
	}
	return nil
}

// unixOr is the time of v seconds, zero for 0.
func unixOr(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

// milliOr is the time of v milliseconds, zero for 0.
func milliOr(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

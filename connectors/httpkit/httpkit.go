// Package httpkit is what every connector that speaks HTTP shares, on top
// of [netguard]'s client: one table from HTTP statuses to canonical codes,
// the mapping of transport failures, a masked one-line excerpt of an error
// body, draining bodies so that connections are reused, a retry helper that
// never repeats a write the server may have done, and a per-instance rate
// limiter.
//
// A connector keeps one [Limiter] per instance, built from the
// [RateLimit] its Config holds, and makes a call so:
//
//	retry := httpkit.Retry{MaxAttempts: 3, Limiter: c.limiter, OnRetry: call.Retry}
//	resp, attempts, err := retry.Do(ctx, c.client, newRequest)
//	if err != nil { // a transport failure, or RATE_LIMITED from the limiter
//		return nil, httpkit.TransportError(ctx, err, "slack")
//	}
//	defer httpkit.Drain(resp)
//	if resp.StatusCode >= 400 {
//		msg := fmt.Sprintf("slack: server answered %s: %s", resp.Status, httpkit.Snippet(resp, secrets))
//		return nil, httpkit.StatusError(resp, msg)
//	}
//
// The package imports only the vocabulary, connectors and netguard, so any
// connector package may use it.
package httpkit

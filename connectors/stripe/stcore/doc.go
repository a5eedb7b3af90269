// Package stcore is the core the stripe connector's toolsets share: its
// own client of Stripe's REST API (form-encoded requests, JSON answers,
// the Stripe-Version the objects are read at), the mapping of Stripe's
// errors to canonical ones, the key's mode guard on every request, ids
// taken as signed refs or as Stripe's own ids, lists paged by signed
// cursor over starting_after, amounts in minor units with a display, and
// writes sent once per idempotency key with Stripe's Idempotency-Key.
package stcore

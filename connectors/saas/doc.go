// Package saas is the toolkit the connectors to SaaS APIs (slack, github,
// notion, google, stripe) share, whatever client library they use: one
// retry loop, rate limiter and error mapping; signed opaque cursors and
// object refs bound to the tenant, instance and tool; a paging input and
// output; writes that a retry never performs twice; and the result models
// of package model.
//
// # A connector on the toolkit
//
// New builds one [Kit] per instance and keeps it:
//
//	func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
//		kit := saas.New(inst, saas.Options{Provider: "slack", Credential: "bot_token", RateLimit: cfg.RateLimit})
//		return &Slack{cfg: cfg, kit: kit}, nil
//	}
//
// A list tool embeds [Page] in its arguments, returns [List] of a model
// (declared with connectors.Returning[saas.List[model.Channel]]), and runs
// its one provider call through [Kit.Read], which resolves the credential,
// waits for the rate limiter, retries RATE_LIMITED (honouring Retry-After,
// bounded by Options.MaxWait and MaxElapsed), TRANSIENT and TIMEOUT with
// backoff and jitter, and refreshes the credential once on AUTH_EXPIRED:
//
//	p, err := s.kit.Open(call, in.Page, 100, 1000) // default 100, at most 1000
//	if err != nil {
//		return nil, err
//	}
//	var out saas.List[model.Channel]
//	err = s.kit.Read(ctx, call, func(ctx context.Context, token string) error {
//		chans, next, err := client(token).GetConversationsContext(ctx, &slack.GetConversationsParameters{Cursor: p.Token, Limit: p.Size})
//		if err != nil {
//			return mapError(ctx, err) // the SDK's error types → saas.StatusError, saas.RateLimited; else saas.Classify
//		}
//		out = saas.ListOf(s.kit, call, channels(call, chans), next)
//		return nil
//	})
//
// A provider that takes a token exchanged for the credential (an OAuth2
// access token got with a refresh token: google) sets Options.Exchange:
// each attempt gets the token it returns, and a token the provider
// refuses is exchanged once more before AUTH_EXPIRED is returned.
// Options.Masked names the other credentials a call resolves (a client
// secret), masked out of errors with the credential and the tokens.
//
// Object ids leave the connector only inside refs ([Kit.Ref], [Kit.Object]);
// a tool taking an object back calls [Kit.Resolve], so that a ref of
// another tenant or instance resolves to nothing (NOT_FOUND). Cursors are
// refused likewise (INVALID_ARGUMENT). Both are signed with the Key the
// gateway derives for the instance and hands each call (connectors.Call.Key);
// they hold the provider's token or id in the clear, signed, not hidden.
//
// # Errors
//
// Each connector maps its library's error types with one function that
// ends in [Classify]: an HTTP status from the SDK's error goes through
// [StatusError] (401 AUTH_EXPIRED, 403 PERMISSION_DENIED, 404 NOT_FOUND,
// 409 CONFLICT, 429 RATE_LIMITED with its wait, 5xx TRANSIENT), an SDK's
// rate-limit type through [RateLimited], an answer of the wrong shape
// through [Mapping] (ADAPTER_MAPPING_ERROR), and everything else —
// timeouts, refused connections, JSON that does not decode — through
// Classify. The kit masks the credential's value out of every error.
//
// # Writes
//
// Every write runs through [WriteOnce], which claims the call's
// OperationID in the instance's operation record (connectors.Call.Operations,
// kept by the gateway's store; it is the approval id for an approved call,
// and the same for a client's retry: see package opkey), returns the
// recorded outcome to every retry, and reconciles a write whose attempt
// ended without an answer — the provider may have performed it — by
// looking for it before sending again. Nothing of Legate's is left in the
// user's data unless the operator sets markers (Options.Markers):
//
//   - by content, the default: Find looks for what the write would have
//     made, by the token's own account, since the first attempt — slack:
//     the same text in the channel's or thread's history; github: an issue
//     with the same title and body, a comment or review with the same
//     body, a pull request from the same head, a file with the same
//     content; notion: a page with the same title and first blocks under
//     the parent, the same run of blocks at the parent's end; writes that
//     set a value (a topic, a property, a reaction) read it back;
//   - by marker, with markers on: slack puts it in the message's metadata,
//     github in an HTML comment ending the body, notion in a gray
//     paragraph, google sheets in a cell after the row's values (on by
//     default there, until its appends match by content);
//   - by the provider's own key: stripe sends the marker as
//     Idempotency-Key and gives no Find: Stripe answers a repeated key with
//     the first result (for 24 hours; the operation record keeps it
//     longer).
//
// # The models
//
// Results are the versioned models of package model (message.v1,
// channel.v1, issue.v1, page.v1, file.v1, sheet_range.v1, customer.v1,
// charge.v1, refund.v1), described in docs/models.md: stable fields for what the
// providers share, provider_metadata for the rest. A tool's result has
// the model as structured content and a short text for the model to read;
// a convention test (internal/conventions) checks that every tool of a
// connector importing this package declares its output schema.
//
// # Testing a connector on the toolkit
//
// Give calls a Key and an Operations ([NewMemoryOperations]) as the
// gateway does, and test against a stand-in of the provider on 127.0.0.1:
// every list tool walks three pages or more by cursor; a cursor or ref of
// another tenant or instance is refused; a 429 with Retry-After is waited,
// then succeeds; 401, 403, 404, 409, 500 and a malformed body map to their
// codes; a write the stand-in performs and then loses the answer of is
// written once (connectors/slack and connectors/github do it a thousand
// times); the credential shows in no result, error or report.
package saas

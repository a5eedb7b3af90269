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
// A write the provider deduplicates by a key of ours (Stripe's
// Idempotency-Key) runs through [Kit.Do] with [Kit.Marker] as that key.
// Any other write runs through [WriteOnce], which claims the call's
// OperationID in the instance's operation record (connectors.Call.Operations,
// kept by the gateway's store; it is the approval id for an approved call),
// returns the recorded outcome to every retry, and reconciles a write whose
// attempt ended without an answer — the provider may have performed it —
// by looking for the marker the write carries before sending again:
//
//   - slack: post_message and reply_thread put the marker in the message's
//     metadata (event_type legate_operation); Find reads the channel's (or
//     thread's) history since the first attempt, with metadata, and
//     matches it;
//   - github: create_issue and comment_issue end the body with an HTML
//     comment <!-- legate-operation: MARKER --> that GitHub does not show;
//     Find lists the repository's issues (or the comments) since
//     the first attempt and matches it;
//   - notion: create_page and append_block carry the marker in a hidden
//     property or block; Find queries for it;
//   - google: sheets_append_row has no hidden place per row: the marker
//     goes in one cell after the row's values; Find reads the table's
//     sheet back and matches it;
//   - stripe: create_refund sends the marker as Idempotency-Key; no Find.
//
// # The models
//
// Results are the versioned models of package model (message.v1,
// channel.v1, issue.v1, page.v1, file.v1, sheet_range.v1, customer.v1,
// charge.v1, refund.v1), described in docs/models.md: stable fields for what the
// providers share, provider_metadata for the rest. A tool's result has
// the model as structured content and a short text for the model to read.
package saas

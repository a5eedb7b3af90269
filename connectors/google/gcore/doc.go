// Package gcore is the core the google connector's services share: the
// instance's saas.Kit, the access tokens held per credential (an OAuth
// refresh token, or a service account's key with domain-wide delegation),
// the HTTP client that sends them, the base URL of each Google API, the
// mapping of Google's errors to canonical ones, and refs to Drive files.
//
// # A service package on the core
//
// Each service is a package (drive, docs, sheets; gmail, calendar) that
// exports
//
//	type Tools struct{ Core *gcore.Core }
//	func (t Tools) List() []connectors.Tool
//	func (t Tools) Scopes() map[string][]string // optional: tool → the OAuth scopes any one of which lets it work, the one to ask for first
//
// and is listed once in the connector's tools.go with its toolset name.
// A tool builds its google.golang.org/api service per attempt with
// [Service], which the core keeps beside the attempt's access token:
//
//	func (t Tools) api(ctx context.Context, token string) (*gmail.Service, error) {
//		return gcore.Service(t.Core, ctx, token, gcore.Gmail, gmail.NewService)
//	}
//
//	err := t.Core.Read(ctx, call, func(ctx context.Context, token string) error {
//		api, err := t.api(ctx, token)
//		if err != nil {
//			return err
//		}
//		_, err = api.Users.Messages.List("me").Context(ctx).Do()
//		return err // made canonical by Read (MapError)
//	})
//
// Writes go through saas.WriteOnce with t.Core.Kit, their Send and Find
// returning [MapError]'s errors. Without Service, a tool may build a
// client itself: [Core.Client] is the HTTP client authorised for a call's
// credential, [Core.ClientFor] the one sending an attempt's access token,
// and [Core.Endpoint] the base URL of a service (the config's gmail_url,
// calendar_url, docs_url, drive_url, sheets_url, with calendar/v3/ and
// drive/v3/ added), to pass as option.WithEndpoint.
//
// # Credentials
//
// A call's credential is either refresh_token (with client_secret and the
// config's client_id), exchanged at the config's oauth_url, or
// service_account_json, a service account's key, signed into a JWT
// assertion for the config's subject (the user it acts as, by domain-wide
// delegation) and exchanged at the same oauth_url for the scopes the
// instance's toolsets need. Exactly one of them: both, or neither, is a
// CONFIG_ERROR naming them. The access token is held per credential until
// a minute before it expires; calls that find it expired share one
// exchange.
package gcore

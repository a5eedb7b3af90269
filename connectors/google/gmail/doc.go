// Package gmail holds the google connector's gmail toolset: search,
// read messages, threads and attachments, list labels; draft, send,
// reply in a thread and label messages, through google.golang.org/api's
// gmail/v1.
//
// The connector hands the tools what they need in [Deps]: its saas.Kit
// (retries, refs, cursors, writes at most once), an HTTP client sending
// the access token the kit hands each attempt, the API's base URL and its
// mapping of Google's errors. Nothing else of the connector is seen here.
//
// Messages are message.v1; their ids, threads and attachments leave as
// signed refs. A message's text is the text/plain part, else the HTML part
// converted to text, cut at [MaxTextBytes]; an attachment is read whole up
// to [MaxAttachmentBytes], as base64 with its MIME type.
//
// Writes run through saas.WriteOnce and leave nothing of Legate's in the
// mailbox. A send or reply whose answer was lost is looked for in the
// Sent folder, by the token's account, since the first attempt, by its
// subject, recipients and text; a draft likewise among the drafts. Label
// changes set a state, and repeating them is harmless.
package gmail

// Package model holds the stable result models of the SaaS connectors, one
// per object kind and versioned: message.v1, channel.v1, issue.v1,
// page.v1, database.v1, block.v1, user.v1, file.v1, sheet_range.v1, customer.v1,
// charge.v1, refund.v1. docs/models.md
// describes each field. A model changes only by adding optional fields;
// anything else is a new version (message.v2) beside the old one.
//
// Every model embeds [Object]: the contract name, the tenant-scoped
// opaque ref (connectors/saas Kit.Ref) the connector's other tools take
// back, the provider and instance, and provider_metadata for what only
// one provider has. Refs, not external ids, are what a model passes on:
// a ref from another tenant or instance resolves to nothing.
package model

import "time"

// The contract names.
const (
	MessageV1  = "message.v1"
	ChannelV1  = "channel.v1"
	IssueV1    = "issue.v1"
	PageV1     = "page.v1"
	DatabaseV1 = "database.v1"
	BlockV1    = "block.v1"
	FileV1     = "file.v1"
	CustomerV1 = "customer.v1"
	ChargeV1   = "charge.v1"
	RefundV1   = "refund.v1"
)

// Object is what every model starts with.
type Object struct {
	Contract string `json:"contract" jsonschema:"the model and its version, e.g. message.v1"`
	Ref      string `json:"ref" jsonschema:"opaque reference to this object; pass it to this connector's other tools"`
	Provider string `json:"provider" jsonschema:"the system the object lives in, e.g. slack"`
	Instance string `json:"instance" jsonschema:"the connector instance that returned it"`
	// ExternalID is the provider's own id, for people and links; tools
	// take the ref, never this.
	ExternalID       string         `json:"external_id" jsonschema:"the provider's id of the object, for display; tools take ref"`
	URL              string         `json:"url,omitempty" jsonschema:"where a person can open the object"`
	ProviderMetadata map[string]any `json:"provider_metadata,omitempty" jsonschema:"fields only this provider has; not stable across providers"`
}

// Person is an author, sender or owner as the provider names them.
type Person struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// Message is message.v1: a chat message or an email.
type Message struct {
	Object
	ChannelRef string    `json:"channel_ref,omitempty" jsonschema:"ref of the channel or folder holding the message"`
	ThreadRef  string    `json:"thread_ref,omitempty" jsonschema:"ref of the thread's first message, when the message is in a thread"`
	Sender     *Person   `json:"sender,omitempty"`
	Text       string    `json:"text"`
	SentAt     time.Time `json:"sent_at,omitzero"`
	Replies    int       `json:"replies,omitempty" jsonschema:"how many replies the message has, when it starts a thread"`
	// The fields below were added for email; other providers may fill them.
	Subject       string       `json:"subject,omitempty"`
	Recipients    []Recipient  `json:"recipients,omitempty" jsonschema:"who the message is addressed to"`
	Snippet       string       `json:"snippet,omitempty" jsonschema:"the start of the text, on one line, when text itself is not given"`
	TextTruncated bool         `json:"text_truncated,omitempty" jsonschema:"text was cut at the connector's limit"`
	ReceivedAt    time.Time    `json:"received_at,omitzero" jsonschema:"when the provider received or stored the message"`
	Labels        []string     `json:"labels,omitempty" jsonschema:"labels or flags, lower case: seen, flagged, answered, draft, or the provider's own"`
	Attachments   []Attachment `json:"attachments,omitempty" jsonschema:"the files attached, listed, not their content"`
}

// Recipient is one addressee of a message.
type Recipient struct {
	Person
	Role string `json:"role,omitempty" jsonschema:"to, cc or bcc"`
}

// Attachment is a file attached to a message.
type Attachment struct {
	// Ref was added for providers whose attachments a tool reads (gmail).
	Ref      string `json:"ref,omitempty" jsonschema:"ref of the attachment, for the connector's tool that reads it, when it has one"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size,omitempty" jsonschema:"bytes, approximate"`
}

// Channel is channel.v1: a place messages are posted to.
type Channel struct {
	Object
	Name      string    `json:"name"`
	Topic     string    `json:"topic,omitempty"`
	Private   bool      `json:"private"`
	Archived  bool      `json:"archived"`
	Members   int       `json:"members,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Issue is issue.v1: an issue or ticket in a tracker.
type Issue struct {
	Object
	Number    int       `json:"number,omitempty"`
	Title     string    `json:"title"`
	Body      string    `json:"body,omitempty"`
	State     string    `json:"state" jsonschema:"open or closed"`
	Author    *Person   `json:"author,omitempty"`
	Labels    []string  `json:"labels,omitempty"`
	Comments  int       `json:"comments,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Comment is the result of commenting on an object; it reuses message.v1.
type Comment = Message

// Page is page.v1: a document page (Notion page, database row).
type Page struct {
	Object
	Title      string         `json:"title"`
	ParentRef  string         `json:"parent_ref,omitempty"`
	Properties map[string]any `json:"properties,omitempty" jsonschema:"the page's properties by name, as plain values"`
	CreatedAt  time.Time      `json:"created_at,omitzero"`
	UpdatedAt  time.Time      `json:"updated_at,omitzero"`
}

// Database is database.v1: a collection of pages that share a set of
// properties (a Notion database).
type Database struct {
	Object
	Title      string            `json:"title"`
	ParentRef  string            `json:"parent_ref,omitempty" jsonschema:"ref of the page holding the database"`
	Properties map[string]string `json:"properties,omitempty" jsonschema:"the properties its pages have, by name, each with its type: title, rich_text, number, select, multi_select, date, checkbox, ..."`
	CreatedAt  time.Time         `json:"created_at,omitzero"`
	UpdatedAt  time.Time         `json:"updated_at,omitzero"`
}

// Block is block.v1: one block of a page's content (a paragraph, a
// heading, a list item).
type Block struct {
	Object
	Type      string    `json:"type" jsonschema:"paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote, code, or another type the provider has"`
	Text      string    `json:"text,omitempty" jsonschema:"the block's text, plain"`
	ParentRef string    `json:"parent_ref,omitempty" jsonschema:"ref of the page (or block) holding it"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// File is file.v1: a stored file or spreadsheet.
type File struct {
	Object
	Name       string    `json:"name"`
	MimeType   string    `json:"mime_type,omitempty"`
	Size       int64     `json:"size,omitempty"`
	ParentRef  string    `json:"parent_ref,omitempty"`
	ModifiedAt time.Time `json:"modified_at,omitzero"`
}

// SheetRangeV1 is the contract name of [SheetRange].
const SheetRangeV1 = "sheet_range.v1"

// SheetRange is sheet_range.v1: cells of a spreadsheet, row by row. Its
// object header is the spreadsheet's: ref, external_id and url are the
// spreadsheet's, so the ref goes back to the tools that take a
// spreadsheet (or a file).
type SheetRange struct {
	Object
	Range    string     `json:"range" jsonschema:"the cells, in A1 notation with the sheet's name, e.g. Sheet1!A2:D11"`
	FirstRow int        `json:"first_row,omitempty" jsonschema:"the sheet's row number of the first of rows, when known"`
	Rows     [][]string `json:"rows" jsonschema:"the cells' values as the sheet shows them, row by row, left to right; trailing empty cells and rows are left out"`
}

// Money is an amount in the currency's smallest unit (cents).
type Money struct {
	Amount   int64  `json:"amount" jsonschema:"in the currency's smallest unit, e.g. cents"`
	Currency string `json:"currency" jsonschema:"ISO 4217, lower case"`
}

// Customer is customer.v1.
type Customer struct {
	Object
	Name      string    `json:"name,omitempty"`
	Email     string    `json:"email,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Charge is charge.v1: a payment.
type Charge struct {
	Object
	Money
	Status      string    `json:"status" jsonschema:"succeeded, pending or failed"`
	CustomerRef string    `json:"customer_ref,omitempty"`
	Refunded    int64     `json:"refunded,omitempty" jsonschema:"amount refunded so far, smallest unit"`
	Description string    `json:"description,omitempty"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
}

// Refund is refund.v1.
type Refund struct {
	Object
	Money
	Status    string    `json:"status"`
	ChargeRef string    `json:"charge_ref,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// UserV1 is the contract name of [User].
const UserV1 = "user.v1"

// User is user.v1: a person or bot of a workspace (a Notion user).
type User struct {
	Object
	Name  string `json:"name"`
	Type  string `json:"type,omitempty" jsonschema:"person or bot"`
	Email string `json:"email,omitempty" jsonschema:"a person's email, when the integration may read it"`
}

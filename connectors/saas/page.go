package saas

import (
	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// Page is the paging input every list tool embeds in its arguments:
//
//	type listChannelsIn struct {
//		saas.Page
//		Types string `json:"types,omitempty"`
//	}
type Page struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many items to return at most; the tool's description gives its default and maximum"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page of this same tool; omit it for the first page"`
}

// List is the result of a list tool: the items of one page and, when more
// follow, the cursor of the next. Give it to connectors.Returning as
// List[model.Channel].
type List[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass it as cursor to get the next page; absent on the last page"`
}

// Paging is a page request made ready for the provider.
type Paging struct {
	// Size is the page size: the limit asked, the default when none, and
	// never above the maximum.
	Size int
	// Token is the provider's page token from the cursor, "" for the
	// first page.
	Token string
}

// Open checks p for call: a negative limit is INVALID_ARGUMENT, none gives
// def, more than max gives max (a model asking for "all" gets a full page
// and a cursor, not an error), and the cursor must be one this tool gave
// this tenant (see [Kit.OpenCursor]).
func (k *Kit) Open(call *connectors.Call, p Page, def, max int) (Paging, error) {
	if p.Limit < 0 {
		return Paging{}, legate.Errorf(legate.CodeInvalidArgument, "%s: limit: must not be negative, got %d", k.opts.Provider, p.Limit)
	}
	size := p.Limit
	if size == 0 {
		size = def
	}
	size = min(size, max)
	token, err := k.OpenCursor(call, p.Cursor)
	if err != nil {
		return Paging{}, err
	}
	return Paging{Size: size, Token: token}, nil
}

// Count is the number of items on the page (a call's trace tells it).
func (l List[T]) Count() int { return len(l.Items) }

// ListOf returns the page of items with the cursor of the provider's next
// page token ("" on the last page). Items is never null.
func ListOf[T any](k *Kit, call *connectors.Call, items []T, nextToken string) List[T] {
	if items == nil {
		items = []T{}
	}
	return List[T]{Items: items, NextCursor: k.Cursor(call, nextToken)}
}

// Convert maps a provider's page of objects to models with of, which
// fails on an object it cannot map: the first failure is returned.
func Convert[T, M any](objects []T, of func(T) (M, error)) ([]M, error) {
	items := make([]M, 0, len(objects))
	for _, o := range objects {
		m, err := of(o)
		if err != nil {
			return nil, err
		}
		items = append(items, m)
	}
	return items, nil
}

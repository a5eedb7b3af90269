package stcore

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// The page size of the list tools: Stripe's own maximum is 100.
const DefaultPage, MaxPage = 25, 100

// Kind is a kind of Stripe object a tool takes back: the kind of its refs
// and the shape of Stripe's ids of it.
type Kind struct {
	Name     string
	prefixes []string // of its ids, "" for any Stripe-like id
	example  string
}

// The kinds of the objects the tools name. Products and prices may carry
// ids the account chose, so theirs are any Stripe-like id.
var (
	Customer      = Kind{"customer", []string{"cus_"}, "cus_..."}
	Charge        = Kind{"charge", []string{"ch_", "py_"}, "ch_... or py_..."}
	Refund        = Kind{"refund", []string{"re_", "pyr_"}, "re_..."}
	PaymentIntent = Kind{"payment_intent", []string{"pi_"}, "pi_..."}
	Invoice       = Kind{"invoice", []string{"in_"}, "in_..."}
	Subscription  = Kind{"subscription", []string{"sub_"}, "sub_..."}
	Product       = Kind{"product", []string{""}, "prod_..."}
	Price         = Kind{"price", []string{""}, "price_..."}
	PaymentLink   = Kind{"payment_link", []string{"plink_"}, "plink_..."}
	Dispute       = Kind{"dispute", []string{"dp_", "du_"}, "dp_..."}
)

// Valid says id has the shape of Stripe's ids of k.
func (k Kind) Valid(id string) bool {
	if len(id) > 255 {
		return false
	}
	for _, p := range k.prefixes {
		rest, ok := strings.CutPrefix(id, p)
		if !ok || rest == "" {
			continue
		}
		if p == "" {
			// An id of the account's choosing: letters, digits, _ and -.
			return IDChars(rest, "_-") && rest[0] != '_' && rest[0] != '-'
		}
		return IDChars(rest, "")
	}
	return false
}

// IDChars says s holds only ASCII letters, digits and the extra bytes.
func IDChars(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte(extra, b) >= 0) {
			return false
		}
	}
	return true
}

// ID resolves the object of kind that value names, Stripe's id or else a
// ref of this connector (what is neither resolves to NOT_FOUND); "" for
// "".
func (c *Core) ID(call *connectors.Call, kind Kind, value, field string) (string, error) {
	switch {
	case value == "":
		return "", nil
	case kind.Valid(value):
		return value, nil
	}
	id, err := c.Kit.Resolve(call, kind.Name, value)
	if err != nil && !strings.Contains(value, "://") {
		return "", legate.Errorf(legate.CodeNotFound, "stripe: %s: %q is neither a Stripe %s id (%s) nor a ref this connector returned", field, value, kind.Name, kind.example)
	}
	return id, err
}

// IDOrRef resolves an object named by a ref or Stripe's id (field) or by
// Stripe's id only (field_id), one of them; "" when neither is given.
func (c *Core) IDOrRef(call *connectors.Call, kind Kind, ref, raw, field string) (string, error) {
	switch {
	case ref != "" && raw != "":
		return "", legate.Errorf(legate.CodeInvalidArgument, "stripe: give %s or %s_id, not both", field, field)
	case ref != "":
		return c.ID(call, kind, ref, field)
	case raw != "" && !kind.Valid(raw):
		return "", legate.Errorf(legate.CodeInvalidArgument, "stripe: %s_id: not a Stripe %s id (%s), got %q", field, kind.Name, kind.example, raw)
	}
	return raw, nil
}

// Need is the error of a required object argument missing.
func Need(field, what string) error {
	return legate.Errorf(legate.CodeInvalidArgument, "stripe: %s: required: %s", field, what)
}

// List reads one page of the list at path (Stripe's limit and
// starting_after, q's filters) and converts its objects with of; the next
// cursor holds the last object's id, signed for the call.
func List[T, M any](ctx context.Context, c *Core, call *connectors.Call, page saas.Page, def, max int, path string, q url.Values, id func(*T) string, of func(*T) (M, error)) (saas.List[M], error) {
	p, err := c.Kit.Open(call, page, def, max)
	if err != nil {
		return saas.List[M]{}, err
	}
	if q == nil {
		q = url.Values{}
	}
	q.Set("limit", strconv.Itoa(p.Size))
	if p.Token != "" {
		q.Set("starting_after", p.Token)
	}
	var pg Page[T]
	if err := c.Get(ctx, call, path, q, &pg); err != nil {
		return saas.List[M]{}, err
	}
	items, err := saas.Convert(pg.Data, of)
	if err != nil {
		return saas.List[M]{}, err
	}
	next := ""
	if pg.HasMore {
		if len(pg.Data) == 0 {
			return saas.List[M]{}, saas.Mapping("stripe", "has_more on an empty page")
		}
		if next = id(pg.Data[len(pg.Data)-1]); next == "" {
			return saas.List[M]{}, saas.Mapping("stripe", "an object without an id")
		}
	}
	return saas.ListOf(c.Kit, call, items, next), nil
}

// Search reads one page of Stripe's search of path (/v1/customers/search)
// for query, converting its objects with of; the next cursor holds
// Stripe's next_page, signed for the call.
func Search[T, M any](ctx context.Context, c *Core, call *connectors.Call, page saas.Page, def, max int, path, query string, of func(*T) (M, error)) (saas.List[M], error) {
	p, err := c.Kit.Open(call, page, def, max)
	if err != nil {
		return saas.List[M]{}, err
	}
	q := url.Values{"query": {query}, "limit": {strconv.Itoa(p.Size)}}
	if p.Token != "" {
		q.Set("page", p.Token)
	}
	var pg Page[T]
	if err := c.Get(ctx, call, path, q, &pg); err != nil {
		return saas.List[M]{}, err
	}
	items, err := saas.Convert(pg.Data, of)
	if err != nil {
		return saas.List[M]{}, err
	}
	next := ""
	if pg.HasMore {
		if pg.NextPage == "" {
			return saas.List[M]{}, saas.Mapping("stripe", "has_more without a next_page")
		}
		next = pg.NextPage
	}
	return saas.ListOf(c.Kit, call, items, next), nil
}

// Write sends r once per call's idempotency key (saas.WriteOnce), with
// the call's marker as Stripe's Idempotency-Key on every attempt and every
// retry, and converts the object Stripe answers with of.
func Write[T, M any](ctx context.Context, c *Core, call *connectors.Call, r Request, of func(*T) (M, error)) (*M, error) {
	return saas.WriteOnce(ctx, c.Kit, call, saas.Write[M]{
		// Stripe deduplicates by Idempotency-Key: every attempt, and every
		// retry of the call, sends the same key, so no Find.
		Send: func(ctx context.Context, key, marker string) (*M, error) {
			r.Idempotency = marker
			var obj T
			if err := c.Send(ctx, r, key, &obj); err != nil {
				return nil, err
			}
			m, err := of(&obj)
			return &m, err
		},
	})
}

// Post is a POST request to path with params.
func Post(path string, params url.Values) Request {
	return Request{Method: http.MethodPost, Path: path, Params: params}
}

// SetMetadata adds metadata[k]=v to q for each entry, checked against
// Stripe's limits (50 keys, keys of 40 characters, values of 500).
func SetMetadata(q url.Values, meta map[string]string) error {
	if len(meta) > 50 {
		return legate.Errorf(legate.CodeInvalidArgument, "stripe: metadata: at most 50 keys, got %d", len(meta))
	}
	for k, v := range meta {
		if k == "" || len(k) > 40 || strings.ContainsAny(k, "[]") || len(v) > 500 {
			return legate.Errorf(legate.CodeInvalidArgument, "stripe: metadata: keys of 1 to 40 characters without brackets, values of at most 500, got key %q", k)
		}
		q.Set("metadata["+k+"]", v)
	}
	return nil
}

// ListText is the text of a page: a count of noun, a line per item, and
// how to go on.
func ListText(noun string, lines []string, next string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", len(lines), noun)
	for _, l := range lines {
		b.WriteString("\n" + l)
	}
	if next != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return b.String()
}

// Lines maps items to their text lines.
func Lines[T any](items []T, text func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = text(it)
	}
	return out
}

package stripe

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/stripe/stcore"
)

// customers is the customers toolset.
type customers struct{ *stcore.Core }

type getCustomerIn struct {
	Customer   string `json:"customer,omitempty" jsonschema:"the customer: its ref (e.g. a charge's customer_ref) or Stripe's id (cus_...)"`
	CustomerID string `json:"customer_id,omitempty" jsonschema:"Stripe's id of the customer (cus_...), when no ref is at hand"`
}

type listCustomersIn struct {
	saas.Page
	Email string `json:"email,omitempty" jsonschema:"only the customers with this e-mail address, exactly as stored (Stripe compares it case-sensitively)"`
}

type createCustomerIn struct {
	Email       string            `json:"email,omitempty" jsonschema:"the customer's e-mail address"`
	Name        string            `json:"name,omitempty" jsonschema:"the customer's full name or business name"`
	Phone       string            `json:"phone,omitempty"`
	Description string            `json:"description,omitempty" jsonschema:"a note shown in the Dashboard"`
	Metadata    map[string]string `json:"metadata,omitempty" jsonschema:"key-value pairs stored with the customer (at most 50)"`
}

func (t customers) tools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[model.Customer](connectors.NewTool("get_customer",
			"Read one customer (customer.v1), by its ref or by Stripe's id.", legate.ClassRead, t.get)),
		connectors.Returning[saas.List[model.Customer]](connectors.NewTool("list_customers",
			fmt.Sprintf("List the account's customers (customer.v1), newest first, or find them by e-mail address (email); a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultPage, MaxPage),
			legate.ClassRead, t.list)),
		connectors.Returning[model.Customer](connectors.NewTool("create_customer",
			writes("Create a customer with an e-mail address, a name or both; returns it (customer.v1)."), legate.ClassWrite, t.create)),
	}
}

func (t customers) get(ctx context.Context, call *connectors.Call, in *getCustomerIn) (*legate.Result, error) {
	id, err := t.IDOrRef(call, stcore.Customer, in.Customer, in.CustomerID, "customer")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: give customer (a ref or cus_...) or customer_id")
	}
	var cu stcore.CustomerObject
	if err := t.Get(ctx, call, "/v1/customers/"+url.PathEscape(id), nil, &cu); err != nil {
		return nil, err
	}
	out, err := t.CustomerOf(call, &cu)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: customerText(out)}, nil
}

func (t customers) list(ctx context.Context, call *connectors.Call, in *listCustomersIn) (*legate.Result, error) {
	q := url.Values{}
	if in.Email != "" {
		if len(in.Email) > 512 || !strings.Contains(in.Email, "@") {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: email: an e-mail address, got %q", in.Email)
		}
		q.Set("email", in.Email)
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, DefaultPage, MaxPage, "/v1/customers", q,
		func(cu *stcore.CustomerObject) string { return cu.ID },
		func(cu *stcore.CustomerObject) (model.Customer, error) { return t.CustomerOf(call, cu) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("customer(s)", stcore.Lines(out.Items, customerText), out.NextCursor)}, nil
}

func (t customers) create(ctx context.Context, call *connectors.Call, in *createCustomerIn) (*legate.Result, error) {
	if in.Email == "" && in.Name == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: give the customer's email, name or both")
	}
	if in.Email != "" && !strings.Contains(in.Email, "@") {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: email: an e-mail address, got %q", in.Email)
	}
	q := url.Values{}
	for k, v := range map[string]string{"email": in.Email, "name": in.Name, "phone": in.Phone, "description": in.Description} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if err := stcore.SetMetadata(q, in.Metadata); err != nil {
		return nil, err
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/customers", q),
		func(cu *stcore.CustomerObject) (model.Customer, error) { return t.CustomerOf(call, cu) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created customer " + customerText(*out)}, nil
}

func customerText(cu model.Customer) string {
	s := cu.ExternalID
	if cu.Name != "" {
		s += " " + cu.Name
	}
	if cu.Email != "" {
		s += " <" + cu.Email + ">"
	}
	if !cu.CreatedAt.IsZero() {
		s += ", customer since " + cu.CreatedAt.Format("2006-01-02")
	}
	return s
}

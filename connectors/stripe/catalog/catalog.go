// Package catalog is the stripe connector's catalog toolset: products and
// prices (list, create) and payment links to them (create).
package catalog

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/stripe/stcore"
)

// Tools are the catalog toolset's tools.
type Tools struct{ *stcore.Core }

// MaxItems bounds the items of a payment link.
const MaxItems = 20

// List lists them.
func (t Tools) List() []connectors.Tool {
	page := fmt.Sprintf("a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page)", stcore.DefaultPage, stcore.MaxPage)
	once := " " + saas.OnceNote
	return []connectors.Tool{
		connectors.Returning[saas.List[Product]](connectors.NewTool("list_products",
			"List the account's products, newest first, optionally only the active (or inactive) ones, "+page+".", legate.ClassRead, t.listProducts)),
		connectors.Returning[Product](connectors.NewTool("create_product",
			"Create a product (what is sold); create_price then gives it a price."+once, legate.ClassWrite, t.createProduct)),
		connectors.Returning[saas.List[Price]](connectors.NewTool("list_prices",
			"List the account's prices, newest first, optionally of one product, active or not, one-time or recurring, "+page+".", legate.ClassRead, t.listPrices)),
		connectors.Returning[Price](connectors.NewTool("create_price",
			"Create a price for a product: an amount in a currency, once or every interval (a subscription's price)."+once, legate.ClassWrite, t.createPrice)),
		connectors.Returning[PaymentLink](connectors.NewTool("create_payment_link",
			"Create a payment link: a Stripe-hosted page where anyone with the URL pays for the prices given."+once, legate.ClassWrite, t.createLink)),
	}
}

// Product is a product.
type Product struct {
	model.Object
	Name            string    `json:"name"`
	Description     string    `json:"description,omitempty"`
	Active          bool      `json:"active"`
	DefaultPriceRef string    `json:"default_price_ref,omitempty"`
	CreatedAt       time.Time `json:"created_at,omitzero"`
}

// Price is a price of a product.
type Price struct {
	model.Object
	ProductRef    string         `json:"product_ref,omitempty"`
	Product       string         `json:"product,omitempty" jsonschema:"Stripe's id of the product"`
	UnitAmount    *stcore.Amount `json:"unit_amount,omitempty" jsonschema:"absent for prices by tiers or chosen by the customer"`
	Type          string         `json:"type" jsonschema:"one_time or recurring"`
	Interval      string         `json:"interval,omitempty" jsonschema:"day, week, month or year, for a recurring price"`
	IntervalCount int64          `json:"interval_count,omitempty"`
	Active        bool           `json:"active"`
	Nickname      string         `json:"nickname,omitempty"`
	LookupKey     string         `json:"lookup_key,omitempty"`
	CreatedAt     time.Time      `json:"created_at,omitzero"`
}

// PaymentLink is a payment link; its url is the page the customer pays on.
type PaymentLink struct {
	model.Object
	Active bool `json:"active"`
}

type productObject struct {
	ID           string             `json:"id"`
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	Active       bool               `json:"active"`
	DefaultPrice *stcore.Expandable `json:"default_price"`
	Created      int64              `json:"created"`
	Livemode     bool               `json:"livemode"`
	Metadata     map[string]string  `json:"metadata"`
}

type priceObject struct {
	ID         string             `json:"id"`
	Product    *stcore.Expandable `json:"product"`
	Currency   string             `json:"currency"`
	UnitAmount *int64             `json:"unit_amount"`
	Type       string             `json:"type"`
	Active     bool               `json:"active"`
	Nickname   string             `json:"nickname"`
	LookupKey  string             `json:"lookup_key"`
	Created    int64              `json:"created"`
	Livemode   bool               `json:"livemode"`
	Recurring  *struct {
		Interval      string `json:"interval"`
		IntervalCount int64  `json:"interval_count"`
	} `json:"recurring"`
}

type linkObject struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	Active   bool   `json:"active"`
	Livemode bool   `json:"livemode"`
}

type listProductsIn struct {
	saas.Page
	Active *bool `json:"active,omitempty" jsonschema:"only active (true) or archived (false) products"`
}

type createProductIn struct {
	Name        string            `json:"name" jsonschema:"the product's name, shown to customers"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

type listPricesIn struct {
	saas.Page
	Product string `json:"product,omitempty" jsonschema:"only this product's prices: its ref or Stripe's id (prod_...)"`
	Active  *bool  `json:"active,omitempty" jsonschema:"only active (true) or archived (false) prices"`
	Type    string `json:"type,omitempty" jsonschema:"only one_time or recurring prices"`
}

type createPriceIn struct {
	Product       string `json:"product" jsonschema:"the product priced: its ref or Stripe's id (prod_...)"`
	UnitAmount    int64  `json:"unit_amount" jsonschema:"the amount in the currency's smallest unit (cents); 0 for a free price"`
	Currency      string `json:"currency" jsonschema:"ISO 4217 code: usd, eur, ..."`
	Interval      string `json:"interval,omitempty" jsonschema:"day, week, month or year for a recurring price; omit it for a one-time price"`
	IntervalCount int64  `json:"interval_count,omitempty" jsonschema:"bill every this many intervals (1 when omitted)"`
	Nickname      string `json:"nickname,omitempty" jsonschema:"a name for the price, not shown to customers"`
	LookupKey     string `json:"lookup_key,omitempty"`
}

type createLinkIn struct {
	Items []linkItemIn `json:"items" jsonschema:"what is sold, 1 to 20 prices"`
}

type linkItemIn struct {
	Price    string `json:"price" jsonschema:"a price: its ref or Stripe's id (price_...)"`
	Quantity int64  `json:"quantity,omitempty" jsonschema:"1 when omitted"`
}

var intervals = []string{"day", "week", "month", "year"}

func (t Tools) listProducts(ctx context.Context, call *connectors.Call, in *listProductsIn) (*legate.Result, error) {
	q := url.Values{}
	if in.Active != nil {
		q.Set("active", strconv.FormatBool(*in.Active))
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, stcore.DefaultPage, stcore.MaxPage, "/v1/products", q,
		func(o *productObject) string { return o.ID },
		func(o *productObject) (Product, error) { return t.productOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("product(s)", stcore.Lines(out.Items, productText), out.NextCursor)}, nil
}

func (t Tools) createProduct(ctx context.Context, call *connectors.Call, in *createProductIn) (*legate.Result, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" || len(name) > 250 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: name: 1 to 250 characters")
	}
	q := url.Values{"name": {name}}
	if in.Description != "" {
		q.Set("description", in.Description)
	}
	if err := stcore.SetMetadata(q, in.Metadata); err != nil {
		return nil, err
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/products", q),
		func(o *productObject) (Product, error) { return t.productOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created product " + productText(*out)}, nil
}

func (t Tools) listPrices(ctx context.Context, call *connectors.Call, in *listPricesIn) (*legate.Result, error) {
	product, err := t.ID(call, stcore.Product, in.Product, "product")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if product != "" {
		q.Set("product", product)
	}
	if in.Active != nil {
		q.Set("active", strconv.FormatBool(*in.Active))
	}
	switch in.Type {
	case "":
	case "one_time", "recurring":
		q.Set("type", in.Type)
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: type: one_time or recurring, got %q", in.Type)
	}
	out, err := stcore.List(ctx, t.Core, call, in.Page, stcore.DefaultPage, stcore.MaxPage, "/v1/prices", q,
		func(o *priceObject) string { return o.ID },
		func(o *priceObject) (Price, error) { return t.priceOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: stcore.ListText("price(s)", stcore.Lines(out.Items, priceText), out.NextCursor)}, nil
}

func (t Tools) createPrice(ctx context.Context, call *connectors.Call, in *createPriceIn) (*legate.Result, error) {
	product, err := t.ID(call, stcore.Product, in.Product, "product")
	if err != nil {
		return nil, err
	}
	switch {
	case product == "":
		return nil, stcore.Need("product", "its ref or prod_...")
	case in.UnitAmount < 0:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: unit_amount: 0 or more, got %d", in.UnitAmount)
	case in.Interval != "" && !slices.Contains(intervals, in.Interval):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: interval: day, week, month or year, got %q", in.Interval)
	case in.IntervalCount < 0 || in.IntervalCount > 0 && in.Interval == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: interval_count: above 0, with an interval")
	}
	if err := stcore.CheckCurrency("currency", in.Currency); err != nil {
		return nil, err
	}
	q := url.Values{"product": {product}, "unit_amount": {strconv.FormatInt(in.UnitAmount, 10)}, "currency": {strings.ToLower(in.Currency)}}
	if in.Interval != "" {
		q.Set("recurring[interval]", in.Interval)
		if in.IntervalCount > 0 {
			q.Set("recurring[interval_count]", strconv.FormatInt(in.IntervalCount, 10))
		}
	}
	for k, v := range map[string]string{"nickname": in.Nickname, "lookup_key": in.LookupKey} {
		if v != "" {
			q.Set(k, v)
		}
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/prices", q),
		func(o *priceObject) (Price, error) { return t.priceOf(call, o) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created price " + priceText(*out)}, nil
}

func (t Tools) createLink(ctx context.Context, call *connectors.Call, in *createLinkIn) (*legate.Result, error) {
	if len(in.Items) == 0 || len(in.Items) > MaxItems {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: items: 1 to %d prices, got %d", MaxItems, len(in.Items))
	}
	q := url.Values{}
	for i, it := range in.Items {
		field := fmt.Sprintf("items[%d]", i)
		price, err := t.ID(call, stcore.Price, it.Price, field+".price")
		switch {
		case err != nil:
			return nil, err
		case price == "":
			return nil, stcore.Need(field+".price", "its ref or price_...")
		case it.Quantity < 0:
			return nil, legate.Errorf(legate.CodeInvalidArgument, "stripe: %s.quantity: above 0, got %d", field, it.Quantity)
		}
		q.Set(fmt.Sprintf("line_items[%d][price]", i), price)
		q.Set(fmt.Sprintf("line_items[%d][quantity]", i), strconv.FormatInt(max(it.Quantity, 1), 10))
	}
	out, err := stcore.Write(ctx, t.Core, call, stcore.Post("/v1/payment_links", q), func(o *linkObject) (PaymentLink, error) {
		if o.ID == "" || o.URL == "" {
			return PaymentLink{}, saas.Mapping("stripe", "a payment link without an id or a url")
		}
		l := PaymentLink{Object: t.Kit.Object(call, "payment_link", stcore.PaymentLink.Name, o.ID), Active: o.Active}
		l.URL = o.URL
		l.ProviderMetadata = map[string]any{"livemode": o.Livemode}
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created payment link " + out.ExternalID + ": " + out.URL}, nil
}

func (t Tools) productOf(call *connectors.Call, o *productObject) (Product, error) {
	if o == nil || o.ID == "" {
		return Product{}, saas.Mapping("stripe", "a product without an id")
	}
	out := Product{Object: t.Kit.Object(call, "product", stcore.Product.Name, o.ID), Name: o.Name, Description: o.Description,
		Active: o.Active, DefaultPriceRef: t.RefOf(call, stcore.Price, stcore.IDOf(o.DefaultPrice)), CreatedAt: stcore.Unix(o.Created)}
	out.URL = stcore.Dashboard(o.Livemode, "products", o.ID)
	meta := map[string]any{"livemode": o.Livemode}
	if id := stcore.IDOf(o.DefaultPrice); id != "" {
		meta["default_price"] = id
	}
	if len(o.Metadata) > 0 {
		meta["metadata"] = o.Metadata
	}
	out.ProviderMetadata = meta
	return out, nil
}

func (t Tools) priceOf(call *connectors.Call, o *priceObject) (Price, error) {
	if o == nil || o.ID == "" || o.Currency == "" {
		return Price{}, saas.Mapping("stripe", "a price without an id or a currency")
	}
	product := stcore.IDOf(o.Product)
	out := Price{Object: t.Kit.Object(call, "price", stcore.Price.Name, o.ID), Product: product, ProductRef: t.RefOf(call, stcore.Product, product),
		Type: o.Type, Active: o.Active, Nickname: o.Nickname, LookupKey: o.LookupKey, CreatedAt: stcore.Unix(o.Created)}
	if o.UnitAmount != nil {
		m := stcore.Money(*o.UnitAmount, o.Currency)
		out.UnitAmount = &m
	}
	if o.Recurring != nil {
		out.Interval, out.IntervalCount = o.Recurring.Interval, o.Recurring.IntervalCount
	}
	out.URL = stcore.Dashboard(o.Livemode, "prices", o.ID)
	out.ProviderMetadata = map[string]any{"livemode": o.Livemode}
	return out, nil
}

func productText(p Product) string {
	s := p.ExternalID + " " + p.Name
	if !p.Active {
		s += " [archived]"
	}
	if p.Description != "" {
		s += ": " + p.Description
	}
	return s
}

func priceText(p Price) string {
	s := p.ExternalID
	if p.UnitAmount != nil {
		s += " " + p.UnitAmount.Display
	}
	if p.Interval != "" {
		s += " every " + p.Interval
		if p.IntervalCount > 1 {
			s = fmt.Sprintf("%s every %d %ss", s[:strings.LastIndex(s, " every ")], p.IntervalCount, p.Interval)
		}
	}
	s += " of " + p.Product
	if !p.Active {
		s += " [archived]"
	}
	return s
}

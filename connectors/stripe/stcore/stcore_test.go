package stcore_test

import (
	"testing"

	"github.com/legate-mcp/legate/connectors/stripe/stcore"
)

func TestFormatMoney(t *testing.T) {
	for _, c := range []struct {
		amount   int64
		currency string
		want     string
	}{
		{1234, "usd", "12.34 usd"},
		{5, "EUR", "0.05 eur"},
		{-250, "gbp", "-2.50 gbp"},
		{1500, "jpy", "1500 jpy"},
		{5124, "kwd", "5.124 kwd"},
		{0, "usd", "0.00 usd"},
	} {
		if got := stcore.FormatMoney(c.amount, c.currency); got != c.want {
			t.Errorf("FormatMoney(%d, %s) = %q; want %q", c.amount, c.currency, got, c.want)
		}
	}
	if m := stcore.Money(1099, "USD"); m.Amount != 1099 || m.Currency != "usd" || m.Display != "10.99 usd" {
		t.Errorf("Money: %+v", m)
	}
}

func TestKindValid(t *testing.T) {
	for _, c := range []struct {
		kind stcore.Kind
		id   string
		want bool
	}{
		{stcore.Customer, "cus_Q1a", true},
		{stcore.Customer, "cus_", false},
		{stcore.Customer, "ch_1", false},
		{stcore.Customer, "cus_1/../x", false},
		{stcore.Charge, "py_9", true},
		{stcore.Product, "gold-plan_2", true},
		{stcore.Product, "-plan", false},
		{stcore.Price, "price 1", false},
		{stcore.Price, "customer://abc.def", false},
		{stcore.Invoice, "in_" + string(make([]byte, 300)), false},
	} {
		if got := c.kind.Valid(c.id); got != c.want {
			t.Errorf("%s.Valid(%q) = %t; want %t", c.kind.Name, c.id, got, c.want)
		}
	}
}

func TestCheckCurrency(t *testing.T) {
	for cur, ok := range map[string]bool{"usd": true, "EUR": true, "us": false, "usd1": false, "u$d": false} {
		if err := stcore.CheckCurrency("currency", cur); (err == nil) != ok {
			t.Errorf("CheckCurrency(%q): %v", cur, err)
		}
	}
}

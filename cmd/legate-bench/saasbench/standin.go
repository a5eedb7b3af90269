package saasbench

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// standIn serves the providers' reads on one loopback port, on their real
// paths: Slack's conversations.list under /api/, GitHub Enterprise's
// issue under /api/v3/, Notion's search under /v1/, Google's token
// endpoint (/token) and Sheets' values.get (/v4/), and Stripe's customer
// (/v1/customers/, and the list of customers by email). The bodies are encoded once; Notion, Google and
// Stripe's reads check the credential as the provider would. It listens
// on addr (host:port; port 0 for any).
func standIn(addr string) (string, func(), error) {
	mux := http.NewServeMux()
	channels, issue := slackChannels(), githubIssue()
	mux.HandleFunc("/api/conversations.list", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(channels)
	})
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(issue)
	})
	notion(mux)
	google(mux)
	stripeCustomer(mux)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func slackChannels() []byte {
	var chans []map[string]any
	for i := range 20 {
		chans = append(chans, map[string]any{"id": fmt.Sprintf("C%08d", i), "name": fmt.Sprintf("team-%02d", i), "is_channel": true,
			"created": 1700000000 + i, "creator": "U000001", "is_archived": false, "is_general": i == 0, "is_member": true,
			"topic":   map[string]any{"value": "Work of team " + fmt.Sprint(i), "creator": "U000001", "last_set": 1700000000},
			"purpose": map[string]any{"value": "Coordination", "creator": "U000001", "last_set": 1700000000}, "num_members": 12 + i})
	}
	return mustJSON(map[string]any{"ok": true, "channels": chans, "response_metadata": map[string]any{"next_cursor": ""}})
}

func githubIssue() []byte {
	return mustJSON(map[string]any{"id": 1001, "node_id": "I_kwDOA", "number": 1, "title": "Checkout fails on empty cart",
		"state": "open", "body": "Steps to reproduce:\n1. Empty the cart\n2. Check out\n\nExpected a message, got a 500.",
		"user":     map[string]any{"login": "octo", "id": 1, "type": "User"},
		"labels":   []map[string]any{{"id": 1, "name": "bug", "color": "d73a4a"}},
		"comments": 3, "created_at": "2026-11-01T10:00:00Z", "updated_at": "2026-11-02T11:00:00Z",
		"html_url": "https://github.example/acme/api/issues/1", "url": "https://github.example/api/v3/repos/acme/api/issues/1"})
}

// notion serves POST /v1/search: 20 pages under one page, most recently
// edited first, as Notion-Version 2022-06-28 gives them.
func notion(mux *http.ServeMux) {
	rich := func(text string) []any {
		return []any{map[string]any{"type": "text", "text": map[string]any{"content": text, "link": nil},
			"annotations": map[string]any{"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
			"plain_text":  text, "href": nil}}
	}
	var pages []any
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i := 20; i >= 1; i-- {
		id := fmt.Sprintf("1a2b3c4d-0000-4000-8000-%012d", i)
		at := t0.Add(time.Duration(i) * time.Hour).Format("2006-01-02T15:04:05.000Z")
		pages = append(pages, map[string]any{
			"object": "page", "id": id, "created_time": at, "last_edited_time": at,
			"created_by": map[string]any{"object": "user", "id": "9f3e1c2a-5b6d-4e7f-8a9b-0c1d2e3f4a5b"}, "last_edited_by": map[string]any{"object": "user", "id": "9f3e1c2a-5b6d-4e7f-8a9b-0c1d2e3f4a5b"},
			"cover": nil, "icon": map[string]any{"type": "emoji", "emoji": "📝"},
			"parent":   map[string]any{"type": "page_id", "page_id": "1a2b3c4d-0000-4000-8000-000000000000"},
			"archived": false, "in_trash": false,
			"properties": map[string]any{"title": map[string]any{"id": "title", "type": "title", "title": rich(fmt.Sprintf("Meeting notes %02d", i))}},
			"url":        "https://www.notion.so/Meeting-notes-" + strings.ReplaceAll(id, "-", ""), "public_url": nil,
		})
	}
	body := mustJSON(map[string]any{"object": "list", "results": pages, "next_cursor": nil, "has_more": false,
		"type": "page_or_database", "page_or_database": map[string]any{}, "request_id": "5b0f6b8e-3c1d-4a8e-9f2a-7d6c5b4a3e2f"})
	mux.HandleFunc("POST /v1/search", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Header.Get("Authorization") != "Bearer "+notionToken || r.Header.Get("Notion-Version") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"object":"error","status":401,"code":"unauthorized","message":"API token is invalid."}`)
			return
		}
		w.Write(body)
	})
}

// google serves the OAuth token endpoint (a refresh token exchanged for
// an access token valid an hour) and Sheets' values.get of Sheet1!A1:E101:
// a header and 19 orders, formatted, as Sheets answers a window larger
// than the data.
func google(mux *http.ServeMux) {
	values := [][]string{{"Order", "Customer", "Date", "Amount", "Status"}}
	customers := []string{"Acme Corp", "Globex", "Initech", "Umbrella", "Stark Industries"}
	for i := 1; i < 20; i++ {
		values = append(values, []string{fmt.Sprintf("SO-%d", 1000+i), customers[i%len(customers)],
			fmt.Sprintf("2026-11-%02d", i), fmt.Sprintf("$%d,%03d.00", i, 250*i%1000), []string{"Paid", "Open", "Shipped"}[i%3]})
	}
	body := mustJSON(map[string]any{"range": sheetWindow, "majorDimension": "ROWS", "values": values})
	tok := mustJSON(map[string]any{"access_token": accessToken, "expires_in": 3599, "token_type": "Bearer",
		"scope": "https://www.googleapis.com/auth/spreadsheets.readonly https://www.googleapis.com/auth/drive.readonly"})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != clientSecret ||
			r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") != refreshToken {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
			return
		}
		w.Write(tok)
	})
	mux.HandleFunc("GET /v4/spreadsheets/{id}/values/{rng}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		switch {
		case r.Header.Get("Authorization") != "Bearer "+accessToken:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token.","status":"UNAUTHENTICATED"}}`)
		case r.PathValue("id") != spreadsheet || r.PathValue("rng") != sheetWindow || r.URL.Query().Get("valueRenderOption") != "FORMATTED_VALUE":
			// Not the read measured: both sides must ask for the same.
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"code":400,"message":"the stand-in serves %s of %s, formatted","status":"INVALID_ARGUMENT"}}`, sheetWindow, spreadsheet)
		default:
			w.Write(body)
		}
	})
}

// stripeCustomer serves GET /v1/customers/{id}: one customer, shaped as
// stripe-mock's fixture with its fields filled in; and GET /v1/customers,
// the list of the customers of an email (P7b's Stripe anchor).
func stripeCustomer(mux *http.ServeMux) {
	body := mustJSON(map[string]any{
		"id": customer, "object": "customer",
		"address": map[string]any{"city": "San Francisco", "country": "US", "line1": "510 Townsend St", "line2": nil, "postal_code": "94103", "state": "CA"},
		"balance": 0, "created": 1732000000, "currency": "usd", "default_source": nil, "delinquent": false,
		"description": "Enterprise plan, billed yearly", "discount": nil, "email": customerEmail,
		"invoice_prefix": "7FE1103",
		"invoice_settings": map[string]any{"custom_fields": nil, "default_payment_method": "pm_1QXg2b2eZvKYlo2CkM3hX8Yz", "footer": nil,
			"rendering_options": nil},
		"livemode": false, "metadata": map[string]any{"account_id": "acct-4711", "plan": "enterprise"}, "name": "Jenny Rosen",
		"next_invoice_sequence": 12, "phone": "+14155550123", "preferred_locales": []string{"en"}, "shipping": nil,
		"tax_exempt": "none", "test_clock": nil,
	})
	// GET /v1/customers?email=: the list of the customers of that email,
	// as Stripe gives it (limit 1 or more: there is one).
	list := []byte(`{"object":"list","data":[` + string(body) + `],"has_more":false,"url":"/v1/customers"}`)
	none := []byte(`{"object":"list","data":[],"has_more":false,"url":"/v1/customers"}`)
	mux.HandleFunc("GET /v1/customers", func(w http.ResponseWriter, r *http.Request) {
		if stripeAuth(w, r) {
			if r.URL.Query().Get("email") == customerEmail {
				w.Write(list)
			} else {
				w.Write(none)
			}
		}
	})
	mux.HandleFunc("GET /v1/customers/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !stripeAuth(w, r):
		case r.PathValue("id") != customer:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"code":"resource_missing","message":"No such customer: '%s'","param":"id","type":"invalid_request_error"}}`, r.PathValue("id"))
		default:
			w.Write(body)
		}
	})
}

// stripeAuth sets the headers of Stripe's answers and, unless r holds the
// stand-in's key, answers 401 and returns false.
func stripeAuth(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_bench")
	if r.Header.Get("Authorization") != "Bearer "+stripeKey {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Invalid API Key provided.","type":"invalid_request_error"}}`)
		return false
	}
	return true
}

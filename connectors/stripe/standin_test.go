package stripe_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-mock/embedded"
	"github.com/stripe/stripe-mock/server"
)

// key is the canary secret key: stripe-mock accepts any sk_test_ key.
const key = "sk_test_canary7f1c9a2b5e0d"

// canary is the part of key no output may show.
const canary = "7f1c9a2b5e0d"

// mock is stripe-mock, in process, loaded once for the package.
var mock http.Handler

func TestMain(m *testing.M) {
	restore := quietStripeMock()
	spec, err := server.LoadSpec(embedded.OpenAPISpec, "")
	if err != nil {
		panic(err)
	}
	fixtures, err := server.LoadFixtures(embedded.OpenAPIFixtures, "")
	if err != nil {
		panic(err)
	}
	stub, err := server.NewStubServer(fixtures, spec, false, false)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", stub.HandleRequest)
	mock = &server.DoubleSlashFixHandler{Mux: mux}
	code := m.Run()
	restore()
	os.Exit(code)
}

// quietStripeMock drops the two lines stripe-mock prints to stdout for
// every request, keeping the rest of the output, and returns the function
// that flushes and restores stdout.
func quietStripeMock() func() {
	real := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	os.Stdout = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "Response: elapsed=") || strings.HasPrefix(line, "Request data = ") {
				continue
			}
			if i := strings.Index(line, "Request: "); i >= 0 {
				// A benchmark's name is printed without a newline before
				// its first request: keep the name on the line.
				real.WriteString(line[:i])
				continue
			}
			real.WriteString(line + "\n")
		}
		io.Copy(real, r)
	}()
	return func() {
		w.Close()
		<-done
		os.Stdout = real
	}
}

// seen is one request the front received.
type seen struct {
	Method, Path, Query, Idempotency, Account, Auth string
	Body                                            string
	// Faulted says the front answered in place of stripe-mock (fault).
	Faulted bool
}

// recorded is an answer kept for replay.
type recorded struct {
	status int
	header http.Header
	body   []byte
	params [32]byte // digest of the request's body
}

// front is the recording front of stripe-mock, which Stripe's servers do
// not need: stripe-mock is stateless, so the front keeps the outcome of
// each write by Idempotency-Key and replays it to a retry as Stripe does
// (Idempotent-Replayed: true), counts the writes that reached stripe-mock,
// can answer instead of it (fault) or lose its answer (lose), and serves
// GET /v1/charges itself from charges when set, since stripe-mock's lists
// have a single page; likewise the other lists seeded, and their searches.
// It keeps one piece of state beyond replays: the subscriptions canceled,
// which it then reads back as canceled.
type front struct {
	srv *httptest.Server

	mu        sync.Mutex
	requests  []seen
	replays   map[string]*recorded
	forwarded map[string]int              // writes that reached stripe-mock, by key
	refunds   []string                    // ids of the refunds created, in order
	lists     map[string][]map[string]any // seeded lists, by path
	canceled  map[string]bool             // subscriptions canceled, by id
	deletes   map[string]int              // DELETEs that reached stripe-mock, by path
	// fault, when set, may answer request n (from 1) in place of stripe-mock.
	fault func(n int, w http.ResponseWriter, r *http.Request) bool
	// lose, when set, is called after a write reached stripe-mock and its
	// outcome was recorded; it may lose the answer (hang up, or wait for
	// the client to give up) and then returns true.
	lose func(created int, w http.ResponseWriter, r *http.Request) bool
}

func newFront(t testing.TB) *front {
	t.Helper()
	f := &front{replays: map[string]*recorded{}, forwarded: map[string]int{}, lists: map[string][]map[string]any{},
		canceled: map[string]bool{}, deletes: map[string]int{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.mu.Lock()
	f.requests = append(f.requests, seen{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body),
		Idempotency: r.Header.Get("Idempotency-Key"), Account: r.Header.Get("Stripe-Account"), Auth: r.Header.Get("Authorization"),
	})
	n, fault := len(f.requests), f.fault
	f.mu.Unlock()
	if fault != nil && fault(n, w, r) {
		f.mu.Lock()
		f.requests[n-1].Faulted = true
		f.mu.Unlock()
		return
	}
	ikey := r.Header.Get("Idempotency-Key")
	if r.Method == http.MethodPost && ikey != "" {
		f.mu.Lock()
		rec, ok := f.replays[ikey]
		f.mu.Unlock()
		if ok {
			if rec.params != sha256.Sum256(body) {
				writeError(w, http.StatusBadRequest, "idempotency_error", "", "Keys for idempotent requests can only be used with the same parameters they were first used with.")
				return
			}
			w.Header().Set("Idempotent-Replayed", "true")
			rec.write(w)
			return
		}
	}
	if r.Method == http.MethodGet && f.serveSeeded(w, r) {
		return
	}
	rw := httptest.NewRecorder()
	mock.ServeHTTP(rw, r)
	rec := &recorded{status: rw.Code, header: rw.Header().Clone(), body: rw.Body.Bytes(), params: sha256.Sum256(body)}
	f.keepState(r, rec)
	if r.Method == http.MethodGet || ikey == "" {
		rec.write(w)
		return
	}
	f.mu.Lock()
	if r.Method == http.MethodPost {
		f.forwarded[ikey]++
	} else {
		f.deletes[r.URL.Path]++
	}
	created := 0
	if r.URL.Path == "/v1/refunds" && rec.status == http.StatusOK {
		// stripe-mock gives every refund the fixture's id: give each its own.
		var obj map[string]any
		if json.Unmarshal(rec.body, &obj) == nil {
			id := fmt.Sprintf("re_front%06d", len(f.refunds)+1)
			obj["id"] = id
			rec.body, _ = json.Marshal(obj)
			f.refunds = append(f.refunds, id)
			created = len(f.refunds)
		}
	}
	if r.Method == http.MethodPost {
		f.replays[ikey] = rec
	}
	lose := f.lose
	f.mu.Unlock()
	if lose != nil && lose(created, w, r) {
		return
	}
	rec.write(w)
}

// keepState reads a subscription canceled as canceled, as Stripe does
// and stripe-mock, stateless, does not.
func (f *front) keepState(r *http.Request, rec *recorded) {
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/subscriptions/")
	if !ok || rec.status != http.StatusOK {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method == http.MethodDelete {
		f.canceled[id] = true
	}
	if f.canceled[id] {
		var obj map[string]any
		if json.Unmarshal(rec.body, &obj) == nil {
			obj["status"] = "canceled"
			rec.body, _ = json.Marshal(obj)
		}
	}
}

func (rec *recorded) write(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.status)
	w.Write(rec.body)
}

// serveSeeded serves a seeded list as Stripe does: limit,
// starting_after, has_more, and the filters customer, email, charge and
// product; and its search: limit, page, next_page. It returns false for
// a path not seeded.
func (f *front) serveSeeded(w http.ResponseWriter, r *http.Request) bool {
	path, search := strings.CutSuffix(r.URL.Path, "/search")
	f.mu.Lock()
	seeded, ok := f.lists[path]
	f.mu.Unlock()
	if !ok {
		return false
	}
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > 100 {
		writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "limit", "Invalid integer: "+q.Get("limit"))
		return true
	}
	var all []map[string]any
	for _, o := range seeded {
		match := true
		for _, k := range []string{"customer", "email", "charge", "product"} {
			if v := q.Get(k); v != "" && !search && o[k] != v {
				match = false
			}
		}
		if match {
			all = append(all, o)
		}
	}
	start := 0
	switch {
	case search && q.Get("query") == "":
		writeError(w, http.StatusBadRequest, "parameter_missing", "query", "Missing required param: query.")
		return true
	case search && q.Get("page") != "":
		n, err := fmt.Sscanf(q.Get("page"), "page_%d", &start)
		if n != 1 || err != nil || start > len(all) {
			writeError(w, http.StatusBadRequest, "parameter_invalid", "page", "Invalid page: "+q.Get("page"))
			return true
		}
	case !search && q.Get("starting_after") != "":
		after := q.Get("starting_after")
		i := slices.IndexFunc(all, func(o map[string]any) bool { return o["id"] == after })
		if i < 0 {
			writeError(w, http.StatusNotFound, "resource_missing", "starting_after", "No such object: '"+after+"'")
			return true
		}
		start = i + 1
	}
	end := min(start+limit, len(all))
	page := map[string]any{"object": "list", "url": path, "data": all[start:end], "has_more": end < len(all)}
	if search {
		page["object"], page["url"], page["next_page"] = "search_result", path+"/search", nil
		if end < len(all) {
			page["next_page"] = fmt.Sprintf("page_%d", end)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
	return true
}

// seedCharges makes f serve n charges, newest first: see seed.
func (f *front) seedCharges(t testing.TB, n int) { f.seed(t, "/v1/charges", n) }

// seed makes f serve n objects at path (and its search), newest first,
// copies of stripe-mock's with their own ids (ch_0007 ... ch_0001),
// amounts (1000 + i), creation times, customers (cus_even, cus_odd),
// e-mail addresses (even@example.com, odd@example.com) and charges
// (ch_even, ch_odd), each where the object has the field.
func (f *front) seed(t testing.TB, path string, n int) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path+"?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rw := httptest.NewRecorder()
	mock.ServeHTTP(rw, req)
	var list struct{ Data []json.RawMessage }
	if rw.Code != http.StatusOK || json.Unmarshal(rw.Body.Bytes(), &list) != nil || len(list.Data) == 0 {
		t.Fatalf("stripe-mock: %d %s", rw.Code, rw.Body)
	}
	var objects []map[string]any
	for i := range n {
		var o map[string]any
		if err := json.Unmarshal(list.Data[0], &o); err != nil {
			t.Fatal(err)
		}
		prefix, _, _ := strings.Cut(o["id"].(string), "_")
		num, parity := n-i, []string{"even", "odd"}[(n-i)%2]
		o["id"] = fmt.Sprintf("%s_%04d", prefix, num)
		o["created"] = 1700000000 + num
		if _, ok := o["amount"]; ok {
			o["amount"] = 1000 + num
		}
		for k, v := range map[string]string{"customer": "cus_" + parity, "email": parity + "@example.com", "charge": "ch_" + parity} {
			if _, ok := o[k]; ok {
				o[k] = v
			}
		}
		objects = append(objects, o)
	}
	f.mu.Lock()
	f.lists[path] = objects
	f.mu.Unlock()
}

func writeError(w http.ResponseWriter, status int, code, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	typ := "invalid_request_error"
	switch {
	case code == "idempotency_error":
		typ, code = "idempotency_error", ""
	case status >= 500:
		typ = "api_error"
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": typ, "code": code, "param": param, "message": msg}})
}

// requestsTo are the requests of method to path that reached stripe-mock
// (or a replay), not those a fault answered.
func (f *front) requestsTo(method, path string) []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seen
	for _, s := range f.requests {
		if s.Method == method && s.Path == path && !s.Faulted {
			out = append(out, s)
		}
	}
	return out
}

func (f *front) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// hangUp answers nothing and closes the connection: the answer is lost.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// cutShort starts an answer and cuts the connection in its middle: the
// client cannot have the answer, and net/http cannot resend the request
// by itself (it does so, for a request with an Idempotency-Key, when a
// reused connection fails before any answer).
func cutShort(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "4096")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(`{"id": "re_`))
	http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

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
// have a single page.
type front struct {
	srv *httptest.Server

	mu        sync.Mutex
	requests  []seen
	replays   map[string]*recorded
	forwarded map[string]int // writes that reached stripe-mock, by key
	refunds   []string       // ids of the refunds created, in order
	charges   []map[string]any
	// fault, when set, may answer request n (from 1) in place of stripe-mock.
	fault func(n int, w http.ResponseWriter, r *http.Request) bool
	// lose, when set, is called after a write reached stripe-mock and its
	// outcome was recorded; it may lose the answer (hang up, or wait for
	// the client to give up) and then returns true.
	lose func(created int, w http.ResponseWriter, r *http.Request) bool
}

func newFront(t testing.TB) *front {
	t.Helper()
	f := &front{replays: map[string]*recorded{}, forwarded: map[string]int{}}
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
	if r.Method == http.MethodGet && r.URL.Path == "/v1/charges" && f.charges != nil {
		f.serveCharges(w, r)
		return
	}
	rw := httptest.NewRecorder()
	mock.ServeHTTP(rw, r)
	rec := &recorded{status: rw.Code, header: rw.Header().Clone(), body: rw.Body.Bytes(), params: sha256.Sum256(body)}
	if r.Method != http.MethodPost || ikey == "" {
		rec.write(w)
		return
	}
	f.mu.Lock()
	f.forwarded[ikey]++
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
	f.replays[ikey] = rec
	lose := f.lose
	f.mu.Unlock()
	if lose != nil && lose(created, w, r) {
		return
	}
	rec.write(w)
}

func (rec *recorded) write(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.status)
	w.Write(rec.body)
}

// serveCharges pages f.charges as Stripe does: limit, starting_after,
// customer, has_more.
func (f *front) serveCharges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > 100 {
		writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "limit", "Invalid integer: "+q.Get("limit"))
		return
	}
	f.mu.Lock()
	var all []map[string]any
	for _, ch := range f.charges {
		if c := q.Get("customer"); c == "" || ch["customer"] == c {
			all = append(all, ch)
		}
	}
	f.mu.Unlock()
	start := 0
	if after := q.Get("starting_after"); after != "" {
		i := slices.IndexFunc(all, func(ch map[string]any) bool { return ch["id"] == after })
		if i < 0 {
			writeError(w, http.StatusNotFound, "resource_missing", "starting_after", "No such charge: '"+after+"'")
			return
		}
		start = i + 1
	}
	end := min(start+limit, len(all))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "url": "/v1/charges", "data": all[start:end], "has_more": end < len(all)})
}

// seedCharges makes f serve n charges, newest first, copies of
// stripe-mock's charge with their own ids, amounts and customers
// (cus_even, cus_odd).
func (f *front) seedCharges(t testing.TB, n int) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/v1/charges/ch_seed", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rw := httptest.NewRecorder()
	mock.ServeHTTP(rw, req)
	if rw.Code != http.StatusOK {
		t.Fatalf("stripe-mock: %d %s", rw.Code, rw.Body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.charges = nil
	for i := range n {
		var ch map[string]any
		if err := json.Unmarshal(rw.Body.Bytes(), &ch); err != nil {
			t.Fatal(err)
		}
		ch["id"] = fmt.Sprintf("ch_%04d", n-i)
		ch["amount"] = 1000 + n - i
		ch["created"] = 1700000000 + n - i
		ch["customer"] = []string{"cus_even", "cus_odd"}[(n-i)%2]
		f.charges = append(f.charges, ch)
	}
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

func (f *front) requestsTo(method, path string) []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seen
	for _, s := range f.requests {
		if s.Method == method && s.Path == path {
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

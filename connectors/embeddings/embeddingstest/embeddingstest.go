// Package embeddingstest is a scripted OpenAI-compatible /v1/embeddings
// endpoint for tests.
package embeddingstest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Model is the only model the endpoint serves.
const Model = "scripted-embed"

// Server is the endpoint. Its vector of a text is deterministic: the
// counts of the text's lower-cased character trigrams, hashed into 256
// dimensions (a crude model of meaning: texts that share parts of words
// point alike). A text listed in Alias is given the vector of the first
// input it saw that holds the alias's value, as a model that knew the two
// mean the same would.
type Server struct {
	srv *httptest.Server
	key string // the bearer key it requires, "" for none

	mu       sync.Mutex
	alias    map[string]string // text → a string of an earlier input whose vector it gets
	seen     []string          // every input, in order
	requests int
	fail     int // answer this status instead, when not 0
}

// New starts an endpoint that requires key as its bearer key ("" for
// none), closed when t ends.
func New(t testing.TB, key string) *Server {
	s := &Server{key: key, alias: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the endpoint's address.
func (s *Server) URL() string { return s.srv.URL + "/v1/embeddings" }

// Alias gives text the vector of the first input seen that holds like.
func (s *Server) Alias(text, like string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alias[text] = like
}

// Fail makes every request answer status (0: answer again).
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = status
}

// Counts are the requests answered and the inputs embedded so far.
func (s *Server) Counts() (requests, inputs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, len(s.seen)
}

// Seen is every input embedded so far, in order.
func (s *Server) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.fail != 0 {
		http.Error(w, `{"error":"rejected key `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}`, s.fail)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "not an embeddings request", http.StatusBadRequest)
		return
	}
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		http.Error(w, "bad key", http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != Model || len(req.Input) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var out struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}
	out.Object, out.Model = "list", req.Model
	// Answered in reverse order: the index, not the position, says which.
	for i := len(req.Input) - 1; i >= 0; i-- {
		in := req.Input[i]
		s.seen = append(s.seen, in)
		text := in
		if want, ok := s.alias[in]; ok {
			for _, seen := range s.seen {
				if strings.Contains(seen, want) {
					text = seen
					break
				}
			}
		}
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: trigramVector(text)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func trigramVector(s string) []float64 {
	v := make([]float64, 256)
	rs := []rune(" " + strings.ToLower(s) + " ")
	for i := 0; i+3 <= len(rs); i++ {
		h := fnv.New32a()
		h.Write([]byte(string(rs[i : i+3])))
		v[h.Sum32()%256]++
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

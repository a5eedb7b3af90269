// Package rounds holds what multi-round-trip requests (SEP-2322, protocol
// 2026-07-28) need beyond one request: the request states Legate issues to
// a client, and asking a client that holds a session for the input an
// upstream requested.
//
// An upstream asks for input (elicitation, sampling, roots) in one of two
// ways: a 2025-era session sends a request in the middle of the call;
// protocol 2026-07-28 answers the request with a result of type
// input_required, which the client answers by sending the request again
// with its answers (inputResponses) and the result's requestState.
//
// Legate speaks 2025-11-25 to an upstream unless its protocol_version says
// otherwise, and an upstream without sessions (a stateless Streamable HTTP
// server) cannot ask mid-call. So a tools/call, prompts/get or
// resources/read of a 2026-07-28 client to such an upstream goes on as a
// request of that protocol, with the client's protocol _meta (Meta) and
// its answers: the upstream's input_required result comes back and is
// passed to the client. A client with a session (2025-11-25) cannot answer
// input_required: Legate asks it mid-call for the input the result
// requests (Fulfil) and sends the request again, for at most MaxRounds
// rounds.
//
// Legate never hands an upstream's request state to the client as it is:
// it seals it (Sealer), with what binds the retry to the first round (who
// asks, for what, with which arguments) and the first round's policy
// decision, into a state of its own. A retry carrying a state that does
// not open, has expired or was issued to another caller or request is
// refused. The state names the logical call: the call path applies policy
// and approval to its first round and writes its one audit row at its
// last.
package rounds

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrState is wrapped by the error of a request state that does not open:
// tampered with, expired, or issued for another caller or request. The
// caller must refuse the retry (a JSON-RPC invalid-params error); the
// client starts the request over.
var ErrState = errors.New("invalid requestState")

// State is what a sealed request state holds: one logical request, from
// its first round on.
type State struct {
	// Call identifies the logical request: its first round's operation id,
	// which every later round keeps.
	Call string `json:"c"`
	// Start is when the first round began (Unix nanoseconds).
	Start int64 `json:"t"`
	// Upstream is the upstream's own request state, sent back to it.
	Upstream string `json:"u,omitempty"`
	// Decision, Rule and Approval are the first round's policy decision,
	// which later rounds keep: policy and approval apply once per call.
	Decision string `json:"d,omitempty"`
	Rule     int    `json:"r,omitempty"`
	Approval string `json:"a,omitempty"`
}

// sealed is a State as sealed.
type sealed struct {
	State
	Subject string `json:"s"`
	Expires int64  `json:"e"`
}

// prefix starts every state this version of Legate issues.
const prefix = "lgs1."

// Sealer issues and opens request states under a key of its own, made
// when it is: a state outlives neither the process nor its key, and a
// retry reaching another replica starts the request over.
type Sealer struct {
	aead cipher.AEAD
	ttl  time.Duration
	now  func() time.Time
}

// NewSealer returns a Sealer whose states expire ttl after they are issued.
func NewSealer(ttl time.Duration) *Sealer {
	key := make([]byte, 32)
	rand.Read(key)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	return &Sealer{aead: aead, ttl: ttl, now: time.Now}
}

// Subject is what a state is bound to: the caller (principal, tenant and,
// for a client with a session, the session), the request's method and
// target (a tool, prompt or resource), and the hash of its arguments.
func Subject(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// Seal issues the state st for subject.
func (s *Sealer) Seal(st State, subject string) string {
	b, _ := json.Marshal(sealed{State: st, Subject: subject, Expires: s.now().Add(s.ttl).Unix()})
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(b)+s.aead.Overhead())
	rand.Read(nonce)
	return prefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, b, []byte(prefix)))
}

// Open returns the state that token holds, if it was issued for subject
// and has not expired.
func (s *Sealer) Open(token, subject string) (State, error) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return State{}, ErrState
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	n := s.aead.NonceSize()
	if err != nil || len(b) < n {
		return State{}, ErrState
	}
	plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(prefix))
	var st sealed
	if err != nil || json.Unmarshal(plain, &st) != nil {
		return State{}, ErrState
	}
	if st.Subject != subject {
		return State{}, errors.Join(ErrState, errors.New("issued for another caller or request"))
	}
	if s.now().Unix() > st.Expires {
		return State{}, errors.Join(ErrState, errors.New("expired"))
	}
	return st.State, nil
}

// Round is what a request of a client of protocol 2026-07-28 carries for
// an upstream that may answer input_required.
type Round struct {
	// Meta is the client's _meta object, as it sent it.
	Meta json.RawMessage
	// Responses are the client's inputResponses (a JSON object), nil on a
	// first round; State is the upstream's request state to send back.
	Responses json.RawMessage
	State     string
}

// NewRound is the round of a request with the given _meta and answers.
func NewRound(meta mcp.Meta, responses mcp.InputResponseMap) *Round {
	r := &Round{}
	r.Meta, _ = json.Marshal(meta)
	if len(responses) > 0 {
		r.Responses, _ = json.Marshal(responses)
	}
	return r
}

// Reseal replaces the requestState of a result's JSON (res), which asks
// for input, with seal(the state it holds), and says its resultType, which
// a server's answer on a session of an earlier protocol leaves out.
func Reseal(res json.RawMessage, seal func(string) string) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(res, &top); err != nil {
		return nil, err
	}
	var up string
	json.Unmarshal(top["requestState"], &up)
	top["requestState"], _ = json.Marshal(seal(up))
	top["resultType"] = json.RawMessage(`"input_required"`)
	return json.Marshal(top)
}

// AsksInput reports whether a result's JSON asks for input: of type
// input_required, or with inputRequests and no resultType, as a server
// answers on a session of an earlier protocol.
func AsksInput(res json.RawMessage) bool {
	var head struct {
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
	}
	return json.Unmarshal(res, &head) == nil && (head.ResultType == "input_required" || head.ResultType == "" && len(head.InputRequests) > 0)
}

package gmail_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"net/http"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/google/gmail"
	"github.com/legate-mcp/legate/connectors/saas"
)

// bearer sends token as the connector's client does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// env is the tools on a stand-in, with the key and operation record a
// gateway hands each call.
type env struct {
	tools []connectors.Tool
	key   []byte
	ops   connectors.Operations
}

// newEnv builds the tools on s with a kit of attempts attempts, as the
// google connector would.
func newEnv(t *testing.T, s *standin, attempts int) *env {
	t.Helper()
	return newEnvMapped(t, s, nil, attempts)
}

// newEnvMapped is newEnv with the connector's mapping of Google's errors,
// mapError (nil for none), and attempts attempts (3 by default).
func newEnvMapped(t *testing.T, s *standin, mapError func(error) error, attempts ...int) *env {
	t.Helper()
	if len(attempts) == 0 {
		attempts = []int{3}
	}
	kit := saas.New(connectors.Instance{ID: "google"}, saas.Options{Provider: "google", Credential: "refresh_token",
		Base: time.Millisecond, MaxAttempts: attempts[0], MaxWait: time.Second})
	tools := gmail.Tools{Deps: gmail.Deps{Kit: kit, BaseURL: s.srv.URL + "/",
		Client: func(_ context.Context, token string) (*http.Client, error) {
			return &http.Client{Transport: bearer{token}}, nil
		}, MapError: gcore.MapError}}
	if mapError != nil {
		tools.MapError = func(_ context.Context, err error) error { return mapError(err) }
	}
	return &env{tools: tools.List(), key: []byte("key of google"), ops: saas.NewMemoryOperations()}
}

func (e *env) call(t *testing.T, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return e.callAs(t, "t1", tool, args, op)
}

func (e *env) callAs(t *testing.T, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	for _, tl := range e.tools {
		if tl.Name == tool {
			return tl.Run(context.Background(), &connectors.Call{
				Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
				Credentials: connectortest.Creds{"refresh_token": token}, OperationID: op,
				Key: func() []byte { return e.key }, Operations: e.ops,
			})
		}
	}
	t.Fatalf("no tool %s", tool)
	return nil, nil
}

// do calls tool and decodes its structured result into T.
func do[T any](t *testing.T, e *env, tool, args, op string) T {
	t.Helper()
	res, err := e.call(t, tool, args, op)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, _ := json.Marshal(res.Structured)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t *testing.T, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

package fastpath

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/admin"
)

// Sessions are the HTTP sessions of this process, tracked as the SDK's
// server initializes them: the go-sdk has no way to find a session by its
// id, to say who opened it, or when it last saw it. The fast paths answer
// on a session only for the credential that opened it, and only while the
// SDK keeps it (ServeSDK notes its requests); the admin API lists them.
type Sessions struct {
	idle    time.Duration // HTTP sessions' idle timeout
	srv     *mcp.Server   // set by Attach
	live    sync.Map      // HTTP session id → *liveSession
	tracked atomic.Int64
}

// NewSessions returns the sessions of a server that closes a session idle
// for idle.
func NewSessions(idle time.Duration) *Sessions { return &Sessions{idle: idle} }

// Attach names the server whose sessions s tracks (its InitializedHandler
// is s.Track).
func (s *Sessions) Attach(srv *mcp.Server) { s.srv = srv }

// liveSession is what the fast paths know of an HTTP session the SDK holds.
type liveSession struct {
	ss *mcp.ServerSession
	// opened is when the session was initialized; owner who opened it
	// (sessionOwner): a session answers only them, and the admin API
	// lists it under them.
	opened time.Time
	owner  string
	// seen is when the SDK last handled one of the session's requests (Unix
	// nanoseconds). The SDK closes a session no request reached for
	// session_idle_timeout, and the fast paths' requests do not reach it; so
	// a session the SDK has not seen for a sixteenth of that goes to the SDK.
	seen atomic.Int64
}

// liveSession returns the session sid of this process, nil if unknown.
func (s *Sessions) liveSession(sid string) *liveSession {
	if sid == "" {
		return nil
	}
	v, ok := s.live.Load(sid)
	if !ok {
		return nil
	}
	return v.(*liveSession)
}

// Session is the session sid the fast paths may answer on for the caller
// of ctx: one of this process, opened by that caller, seen by the SDK lately.
func (s *Sessions) Session(ctx context.Context, sid string) *mcp.ServerSession {
	ls := s.liveSession(sid)
	if ls == nil || ls.owner != userOf(ctx) || time.Since(time.Unix(0, ls.seen.Load())) > s.idle/16 {
		return nil
	}
	return ls.ss
}

// ServeSDK has the SDK answer r (h, its stateful handler), noting that
// the SDK saw r's session, or that it no longer has it.
func (s *Sessions) ServeSDK(h http.Handler, w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	ls := s.liveSession(sid)
	if ls == nil {
		h.ServeHTTP(w, r)
		return
	}
	ls.seen.Store(time.Now().UnixNano())
	sw := &statusWriter{ResponseWriter: w}
	h.ServeHTTP(sw, r)
	if sw.status == http.StatusNotFound || r.Method == http.MethodDelete && sw.status < 300 {
		s.live.Delete(sid)
	}
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// userOf is the identity of a request's credential (sessionOwner), ""
// without auth: a session answers only the one that opened it, as the
// SDK's sessions do.
func userOf(ctx context.Context) string {
	if ti := sdkauth.TokenInfoFromContext(ctx); ti != nil {
		return ti.UserID
	}
	return ""
}

// Track records an initialized session, and who opened it, for the fast
// paths. Entries of ended sessions are pruned as new ones come,
// without a goroutine per session.
func (s *Sessions) Track(ctx context.Context, req *mcp.InitializedRequest) {
	id := req.Session.ID()
	if id == "" {
		return // stateless: no session to answer for
	}
	// ctx is the request that carried notifications/initialized, which the
	// SDK let through only with the credential that opened the session.
	ls := &liveSession{ss: req.Session, opened: time.Now(), owner: userOf(ctx)}
	ls.seen.Store(time.Now().UnixNano())
	s.live.Store(id, ls)
	if s.tracked.Add(1)%256 == 0 {
		alive := map[string]bool{}
		for ss := range s.srv.Sessions() {
			alive[ss.ID()] = true
		}
		s.live.Range(func(k, _ any) bool {
			if !alive[k.(string)] {
				s.live.Delete(k)
			}
			return true
		})
	}
}

// List lists the live MCP sessions, with who opened each over HTTP.
func (s *Sessions) List() []admin.Session {
	out := []admin.Session{}
	for ss := range s.srv.Sessions() {
		a := admin.Session{ID: ss.ID()}
		if ls := s.liveSession(ss.ID()); ls != nil {
			a.OpenedAt, a.LastSeen = ls.opened, time.Unix(0, ls.seen.Load())
			a.Principal = ls.owner
		}
		out = append(out, a)
	}
	return out
}

// Close closes the session with id, reporting whether there was one.
func (s *Sessions) Close(id string) bool {
	for ss := range s.srv.Sessions() {
		if ss.ID() == id {
			ss.Close()
			return true
		}
	}
	return false
}

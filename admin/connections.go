package admin

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connections"
)

// connectionsHandler serves the admin API's per-user connections of m,
// behind the admin API's own authentication:
//
//   - GET /admin/v1/connections?tenant=T&principal=P&instance=I lists
//     them (never their tokens), and what the caller ("principal") may
//     connect ("connectable", see [connections.Manager.Connectable]);
//   - DELETE /admin/v1/connections/{instance}?principal=P&tenant=T
//     revokes one;
//   - POST /admin/v1/connections/{instance}/connect starts a consent
//     that connects the caller's own account in the browser that asks
//     (the panel's): "url" is the provider's consent URL, which completes
//     only in the browser that keeps the cookie this answer sets (see
//     [connections.Manager.Begin]), its callback on the origin the request came to
//     unless Legate's public URL is configured; "connect_url" is the
//     link to hand a person instead (see [connections.Manager.LinkURL]);
//   - PUT /admin/v1/connections/{instance}/token with {"token": "..."}
//     connects the caller's own account with a credential of their own
//     (see [connections.Manager.SetToken]); the answer describes the connection,
//     never the token.
//
// A principal below the admin role sees and revokes those of its own
// tenant only. Without authentication the caller is Options.Principal.
func connectionsHandler(m *connections.Manager) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/v1/connections", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := connections.Filter{Principal: q.Get("principal"), Instance: q.Get("instance")}
		if q.Has("tenant") {
			t := q.Get("tenant")
			f.Tenant = &t
		}
		if own, scoped := connectionScope(r); scoped {
			if f.Tenant != nil && *f.Tenant != own {
				writeJSONError(w, http.StatusForbidden, "forbidden: seeing other tenants needs the admin role")
				return
			}
			f.Tenant = &own
		}
		list, err := m.List(r.Context(), f)
		if err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
		principal, tenant := m.Caller(r)
		can, err := m.Connectable(r.Context(), tenant, principal)
		if err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"connections": append([]connections.Info{}, list...), "connectable": append([]connections.Connectable{}, can...), "principal": principal})
	})
	mux.HandleFunc("POST /admin/v1/connections/{instance}/connect", func(w http.ResponseWriter, r *http.Request) {
		principal, tenant := m.Caller(r)
		instance := r.PathValue("instance")
		link, err := m.LinkURL(r.Context(), instance, tenant, principal, connections.RequestOrigin(r))
		if err != nil {
			connectionFailed(w, err)
			return
		}
		u, err := m.Begin(w, r, instance, tenant, principal)
		if err != nil {
			connectionFailed(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"url": u, "connect_url": link})
	})
	mux.HandleFunc("PUT /admin/v1/connections/{instance}/token", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Token string `json:"token"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			writeJSONError(w, http.StatusBadRequest, "the body must be {\"token\": \"...\"}")
			return
		}
		principal, tenant := m.Caller(r)
		info, err := m.SetToken(r.Context(), tenant, principal, r.PathValue("instance"), in.Token)
		if err != nil {
			connectionFailed(w, err)
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("DELETE /admin/v1/connections/{instance}", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tenant := q.Get("tenant")
		if own, scoped := connectionScope(r); scoped && tenant != own {
			writeJSONError(w, http.StatusForbidden, "forbidden: revoking in other tenants needs the admin role")
			return
		}
		if q.Get("principal") == "" {
			writeJSONError(w, http.StatusBadRequest, "principal is required")
			return
		}
		err := m.Revoke(r.Context(), tenant, q.Get("principal"), r.PathValue("instance"))
		switch {
		case errors.Is(err, connections.ErrNoConnection):
			writeJSONError(w, http.StatusNotFound, err.Error())
		case err != nil:
			writeJSONError(w, http.StatusInternalServerError, err.Error())
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	return mux
}

// ownRevokes serves with own a DELETE /admin/v1/connections/{instance}
// of its caller's own connection (principal and tenant its own), and any
// other request with other: on a hardened deployment revoking one's own
// connection needs no pin, as connecting one's own account does not; it
// takes access away from nobody but the caller.
func ownRevokes(own, other http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, q := auth.PrincipalFromContext(r.Context()), r.URL.Query()
		if r.Method == http.MethodDelete && p != nil && q.Get("principal") == p.Name && q.Get("tenant") == p.Tenant {
			own.ServeHTTP(w, r)
			return
		}
		other.ServeHTTP(w, r)
	})
}

// connectionScope is the tenant a caller below the admin role is confined to.
func connectionScope(r *http.Request) (string, bool) {
	p := auth.PrincipalFromContext(r.Context())
	if p == nil || p.HasRole(auth.RoleAdmin) {
		return "", false
	}
	return p.Tenant, true
}

// connectionFailed answers err of the connection flow with the admin API's status for its
// code.
func connectionFailed(w http.ResponseWriter, err error) {
	var e *legate.Error
	if !errors.As(err, &e) {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	switch e.Code {
	case legate.CodeNotFound:
		writeJSONError(w, http.StatusNotFound, e.Message)
	case legate.CodeInvalidArgument:
		writeJSONError(w, http.StatusBadRequest, e.Message)
	default:
		writeJSONError(w, http.StatusInternalServerError, e.Message)
	}
}

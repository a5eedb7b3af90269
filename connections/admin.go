package connections

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
)

// AdminHandler serves the admin API's connections, behind the admin
// API's own authentication:
//
//   - GET /admin/v1/connections?tenant=T&principal=P&instance=I lists
//     them (never their tokens), and what the caller ("principal") may
//     connect ("connectable", see [Manager.Connectable]);
//   - DELETE /admin/v1/connections/{instance}?principal=P&tenant=T
//     revokes one;
//   - POST /admin/v1/connections/{instance}/connect starts a consent
//     that connects the caller's own account in the browser that asks
//     (the panel's): "url" is the provider's consent URL, which completes
//     only in the browser that keeps the cookie this answer sets (see
//     [Manager.Begin]), its callback on the origin the request came to
//     unless Legate's public URL is configured; "connect_url" is the
//     link to hand a person instead (see [Manager.LinkURL]).
//
// A principal below the admin role sees and revokes those of its own
// tenant only. Without authentication the caller is Options.Principal.
func (m *Manager) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/v1/connections", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := Filter{Principal: q.Get("principal"), Instance: q.Get("instance")}
		if q.Has("tenant") {
			t := q.Get("tenant")
			f.Tenant = &t
		}
		if own, scoped := scope(r); scoped {
			if f.Tenant != nil && *f.Tenant != own {
				writeError(w, http.StatusForbidden, "PERMISSION_DENIED", "forbidden: seeing other tenants needs the admin role")
				return
			}
			f.Tenant = &own
		}
		list, err := m.List(r.Context(), f)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
			return
		}
		principal, tenant := m.caller(r)
		can, err := m.Connectable(r.Context(), tenant, principal)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"connections": append([]Info{}, list...), "connectable": append([]Connectable{}, can...), "principal": principal})
	})
	mux.HandleFunc("POST /admin/v1/connections/{instance}/connect", func(w http.ResponseWriter, r *http.Request) {
		principal, tenant := m.caller(r)
		instance := r.PathValue("instance")
		link, err := m.LinkURL(r.Context(), instance, tenant, principal, requestOrigin(r))
		if err != nil {
			failed(w, err)
			return
		}
		u, err := m.Begin(w, r, instance, tenant, principal)
		if err != nil {
			failed(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"url": u, "connect_url": link})
	})
	mux.HandleFunc("DELETE /admin/v1/connections/{instance}", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tenant := q.Get("tenant")
		if own, scoped := scope(r); scoped && tenant != own {
			writeError(w, http.StatusForbidden, "PERMISSION_DENIED", "forbidden: revoking in other tenants needs the admin role")
			return
		}
		if q.Get("principal") == "" {
			writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "principal is required")
			return
		}
		err := m.Revoke(r.Context(), tenant, q.Get("principal"), r.PathValue("instance"))
		switch {
		case errors.Is(err, ErrNoConnection):
			writeError(w, http.StatusNotFound, "NOT_FOUND", err.Error())
		case err != nil:
			writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	return mux
}

// OwnRevokes serves with own a DELETE /admin/v1/connections/{instance}
// of its caller's own connection (principal and tenant its own), and any
// other request with other: on a hardened deployment revoking one's own
// connection needs no pin, as connecting one's own account does not; it
// takes access away from nobody but the caller.
func OwnRevokes(own, other http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, q := auth.PrincipalFromContext(r.Context()), r.URL.Query()
		if r.Method == http.MethodDelete && p != nil && q.Get("principal") == p.Name && q.Get("tenant") == p.Tenant {
			own.ServeHTTP(w, r)
			return
		}
		other.ServeHTTP(w, r)
	})
}

// scope is the tenant a caller below the admin role is confined to.
func scope(r *http.Request) (string, bool) {
	p := auth.PrincipalFromContext(r.Context())
	if p == nil || p.HasRole(auth.RoleAdmin) {
		return "", false
	}
	return p.Tenant, true
}

// failed answers err of the flow with the admin API's status for its
// code.
func failed(w http.ResponseWriter, err error) {
	var e *legate.Error
	if !errors.As(err, &e) {
		writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
		return
	}
	switch e.Code {
	case legate.CodeNotFound:
		writeError(w, http.StatusNotFound, "NOT_FOUND", e.Message)
	case legate.CodeInvalidArgument:
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", e.Message)
	default:
		writeError(w, http.StatusInternalServerError, "INTERNAL", e.Message)
	}
}

// writeError answers as the admin API does: {"error": {"code", "message"}}.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

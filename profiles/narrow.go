package profiles

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/mcpapps"
)

// One URL per toolset. A person with several clients gives each its own
// set of tools with one credential: a request to /mcp/{profile}, or to /mcp
// with the ProfileHeader, sees the view of that profile narrowed to the
// caller's own (the tools in both, so never more than its own). Policy,
// audit, rate limits and approvals stay the caller's: only the view
// changes. A session opened on one URL answers only that URL, as a session
// answers only the credential that opened it.

// ProfileHeader names, for a request to /mcp, the profile /mcp/{profile}
// would.
const ProfileHeader = "Mcp-Legate-Profile"

// Narrow serves next with the caller's view narrowed to the profile the
// request names ({profile} in its path, else ProfileHeader), if any; a
// profile unknown answers 404, one not for the caller's profile 403. Wrap
// it in the authentication middleware: it reads the caller from the
// request's context.
func (d *Discovery) Narrow(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("profile")
		if name == "" {
			name = strings.TrimSpace(r.Header.Get(ProfileHeader))
		}
		if name == "" {
			next.ServeHTTP(w, r)
			return
		}
		prof, known := d.Profile(name)
		if !known {
			refuse(w, http.StatusNotFound, fmt.Sprintf("no profile is named %q", name))
			return
		}
		ti := sdkauth.TokenInfoFromContext(r.Context())
		p := auth.PrincipalFrom(ti)
		if msg := narrowRefused(p, prof); msg != "" {
			refuse(w, http.StatusForbidden, msg)
			return
		}
		auth.ServeAs(d.narrowed(ti, p, name), next, w, r)
	})
}

// narrowRefused says why p may not narrow to prof, "" if it may: a caller
// of prof, one of a profile prof is for, and one with no profile may.
func narrowRefused(p *auth.Principal, prof config.Profile) string {
	if p == nil || p.Profile == "" || p.Profile == prof.Name || slices.Contains(prof.For, p.Profile) {
		return ""
	}
	return fmt.Sprintf("profile %q is not for callers of profile %q (its for: lists the profiles that may use it)", prof.Name, p.Profile)
}

// narrowed is ti (nil without authentication) for a request narrowed to
// profile name: its principal a copy with Narrow set, its UserID, to which
// HTTP sessions are bound, naming the profile.
func (d *Discovery) narrowed(ti *sdkauth.TokenInfo, p *auth.Principal, name string) *sdkauth.TokenInfo {
	// Without authentication, the local caller, who may do anything.
	c := auth.Principal{Name: d.Principal, Role: auth.RoleAdmin}
	if p != nil {
		c = *p
	}
	c.Narrow = name
	var out sdkauth.TokenInfo
	if ti != nil {
		out = *ti
	}
	out.UserID += fmt.Sprintf(" profile %q", name)
	out.Extra = maps.Clone(out.Extra)
	if out.Extra == nil {
		out.Extra = map[string]any{}
	}
	out.Extra[auth.PrincipalKey] = &c
	return &out
}

// refuse answers a request with a JSON-RPC error as a JSON body and an
// HTTP status.
func refuse(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":%s}`+"\n", b)
}

// ViewOf is the view of base p sees, under the profiles profile finds,
// srcs its sources: its own profile's (View), and with p.Narrow set, the
// tools of the narrowing profile's view that are also in it, under the
// narrowing profile's wire naming. A profile unknown is an error.
func ViewOf(ctx context.Context, base *catalog.Catalog, profile func(string) (config.Profile, bool), p *auth.Principal, srcs []Source) (*catalog.Catalog, error) {
	prof, known := profile(p.Profile)
	if !known {
		return nil, fmt.Errorf("principal %q names an unknown profile %q", p.Name, p.Profile)
	}
	own, err := View(ctx, base, prof, p.Tenant, p.Name, srcs)
	if err != nil || p.Narrow == "" {
		return own, err
	}
	ownProf := prof // whose apps narrowing never widens
	if prof, known = profile(p.Narrow); !known {
		return nil, fmt.Errorf("principal %q narrows to an unknown profile %q", p.Name, p.Narrow)
	}
	narrow, err := View(ctx, base, prof, p.Tenant, p.Name, srcs)
	if err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	for _, e := range own.Entries() {
		mine[e.Canonical] = true
	}
	search := prof.Discovery == config.DiscoverySearch
	var both []*catalog.Entry
	for _, e := range narrow.Entries() {
		// A search-mode list starts with the gateway's own search and
		// approval tools, which only ever show the view itself.
		if mine[e.Canonical] || search && (e.Canonical == SearchTool || e.Canonical == ApprovalTool) {
			c := *e
			t := *e.Tool
			if !AppsOf(ownProf, e.SourceID()) {
				t = *mcpapps.Strip(&t) // narrowing never shows apps the caller's own profile does not
			}
			t.Name = e.Canonical
			c.Tool = &t
			both = append(both, &c)
		}
	}
	return catalog.Build(narrow.Naming(), both)
}

package notion

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// The kinds of the refs the connector hands out.
const (
	kindPage       = "page"
	kindDatabase   = "database"
	kindDataSource = "data_source"
	kindBlock      = "block"
	kindUser       = "user"
	kindDiscussion = "discussion"
)

// uuid is a Notion id with its dashes; hex32 one without, alone or at
// the end of a URL's path segment (Title-<32 hex>).
var (
	uuid  = regexp.MustCompile(`(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	hex32 = regexp.MustCompile(`(?i)(?:^|-)([0-9a-f]{32})$`)
)

// nativeID reads s as a Notion id: a UUID with or without dashes, or a
// Notion URL (https://www.notion.so/workspace/Title-<32 hex>; a ?p= names
// the page shown over a database; ?v= is a view, the database is in the
// path). It returns the dashed, lower-case id, or "" when s is none.
func nativeID(s string) string {
	s = strings.TrimSpace(s)
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		host := u.Hostname()
		if !strings.HasSuffix(host, "notion.so") && !strings.HasSuffix(host, "notion.site") && !strings.HasSuffix(host, "notion.com") {
			return ""
		}
		if p := u.Query().Get("p"); p != "" {
			return nativeID(p)
		}
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		return nativeID(segs[len(segs)-1])
	}
	if uuid.MatchString(s) {
		return strings.ToLower(s)
	}
	m := hex32.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	h := strings.ToLower(m[1])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// resolve is the Notion id of ref, one of kinds: a ref this connector
// returned (of this tenant and instance), or a native id or URL, whose
// kind the caller learns from Notion. kind is "" for a native id.
func (c *base) resolve(call *connectors.Call, field, ref string, kinds ...string) (kind, id string, err error) {
	for _, k := range kinds {
		if strings.HasPrefix(ref, k+"://") {
			id, err := c.kit.Resolve(call, k, ref)
			return k, id, err
		}
	}
	if id := nativeID(ref); id != "" {
		return "", id, nil
	}
	return "", "", legate.Errorf(legate.CodeNotFound, "notion: %s: no %s %q here; pass a ref this connector returned, a Notion id or a Notion URL", field, strings.Join(kinds, " or "), ref)
}

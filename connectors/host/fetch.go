package host

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host/workspace"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

type fetchArgs struct {
	URL  string `json:"url" jsonschema:"https URL to download"`
	Name string `json:"name,omitempty" jsonschema:"File name to save as under the download directory (default: the URL's last path segment)"`
}

// FetchResult is net_fetch's result.
type FetchResult struct {
	Path        string `json:"path" jsonschema:"Where the file was written, relative to the workspace"`
	Bytes       int64  `json:"bytes"`
	SHA256      string `json:"sha256"`
	ContentType string `json:"content_type,omitempty"`
	Mode        string `json:"mode" jsonschema:"The file's permissions: never executable"`
}

// fetchTimeout bounds one download.
const fetchTimeout = 10 * time.Minute

// errNotHTTPS refuses a redirect off https.
var errNotHTTPS = errors.New("redirect off https refused")

// fetcher is an instance's net_fetch: its configuration, its workspace
// and its client, made at the first download.
type fetcher struct {
	cfg    *Config
	jail   *workspace.Jail
	once   sync.Once
	client *http.Client
	err    error
}

func (c *fetcher) close() {
	if c.client != nil {
		c.client.CloseIdleConnections()
	}
}

func (c *fetcher) tool() connectors.Tool {
	desc := fmt.Sprintf("Download a file over https into the workspace's %s directory, written without the executable bit; plain http and redirects off https are refused; at most %d bytes", c.cfg.FetchDir, c.cfg.FetchMaxBytes)
	if len(c.cfg.FetchAllowlist) > 0 {
		desc += "; hosts: " + strings.Join(c.cfg.FetchAllowlist, ", ") + " and their subdomains"
	}
	return connectors.Returning[FetchResult](connectors.NewTool("net_fetch", desc+".", legate.ClassWrite, c.netFetch))
}

// hostAllowed reports whether host is on fetch_allowlist (itself or a
// subdomain of an entry); an empty list allows any.
func (c *fetcher) hostAllowed(host string) bool {
	if len(c.cfg.FetchAllowlist) == 0 {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range c.cfg.FetchAllowlist {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	return false
}

func (c *fetcher) checkURL(u *url.URL) error {
	if u.Scheme != "https" {
		return legate.Errorf(legate.CodePermissionDenied, "host: only https downloads are allowed, not %s", u.Scheme)
	}
	if u.Hostname() == "" || u.User != nil {
		return legate.Errorf(legate.CodeInvalidArgument, "host: the URL needs a host and no user info")
	}
	if !c.hostAllowed(u.Hostname()) {
		return legate.Errorf(legate.CodePermissionDenied, "host: %s is not on fetch_allowlist", u.Hostname())
	}
	return nil
}

// fetchClient is the instance's download client, made at the first use.
func (c *fetcher) fetchClient() (*http.Client, error) {
	c.once.Do(func() { c.client, c.err = c.newFetchClient() })
	return c.client, c.err
}

func (c *fetcher) newFetchClient() (*http.Client, error) {
	opts := netguard.Options{AllowPrivate: c.cfg.AllowPrivateNetworks, Timeout: fetchTimeout}
	if c.cfg.FetchCAFile != "" {
		pem, err := os.ReadFile(c.cfg.FetchCAFile)
		if err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "host: fetch_ca_file: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "host: fetch_ca_file %s holds no PEM certificate", c.cfg.FetchCAFile)
		}
		opts.RootCAs = pool
	}
	cl := netguard.NewClient(opts)
	guard := cl.CheckRedirect
	cl.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := c.checkURL(req.URL); err != nil {
			return fmt.Errorf("%w: %v", errNotHTTPS, err)
		}
		return guard(req, via)
	}
	return cl, nil
}

// fetchDir is the download directory, relative to the root, created when
// missing, and the workspace's root. It is refused when it is on PATH,
// where a download could be run by name.
func (c *fetcher) fetchDir() (*os.Root, string, error) {
	root, err := c.jail.Open()
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Clean(c.cfg.FetchDir)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return nil, "", workspace.FSError("mkdir", dir, err)
	}
	abs, err := filepath.EvalSymlinks(filepath.Join(c.jail.Real(), dir))
	if err != nil {
		return nil, "", workspace.FSError("mkdir", dir, err)
	}
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		if rp, err := filepath.EvalSymlinks(p); err == nil && rp == abs {
			return nil, "", legate.Errorf(legate.CodePermissionDenied, "host: fetch_dir %s is on PATH: downloads must not be runnable by name", dir)
		}
	}
	return root, dir, nil
}

func (c *fetcher) netFetch(ctx context.Context, call *connectors.Call, in *fetchArgs) (*legate.Result, error) {
	u, err := url.Parse(in.URL)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: url: %v", err)
	}
	if err := c.checkURL(u); err != nil {
		return nil, err
	}
	name := in.Name
	if name == "" {
		name = path.Base(u.Path)
	}
	if name == "" || name == "." || name == "/" || !filepath.IsLocal(name) || strings.ContainsAny(name, "/\\\x00") {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: name %q: give a plain file name", name)
	}
	root, dir, err := c.fetchDir()
	if err != nil {
		return nil, err
	}
	cl, err := c.fetchClient()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: url: %v", err)
	}
	req.Header.Set("User-Agent", "Legate-Host")
	resp, err := cl.Do(req)
	if err != nil {
		if errors.Is(err, errNotHTTPS) {
			return nil, legate.Errorf(legate.CodePermissionDenied, "host: %v", err)
		}
		return nil, httpkit.TransportError(ctx, err, "host: net_fetch")
	}
	defer httpkit.Drain(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, httpkit.StatusError(resp, fmt.Sprintf("host: net_fetch: %s answered %d %s", u.Host, resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	max := int64(c.cfg.FetchMaxBytes)
	if resp.ContentLength > max {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: the download is %d bytes, over fetch_max_bytes (%d)", resp.ContentLength, max)
	}
	out, err := c.save(root, dir, name, resp.Body, max)
	if err != nil {
		return nil, err
	}
	out.ContentType = resp.Header.Get("Content-Type")
	return &legate.Result{Structured: out}, nil
}

// save writes body, at most max bytes, to dir/name of root: to a new file
// first, renamed over name once whole, so that a refused or broken
// download leaves nothing and a symlink at name is replaced, never written
// through.
func (c *fetcher) save(root *os.Root, dir, name string, body io.Reader, max int64) (*FetchResult, error) {
	tmp := filepath.Join(dir, ".net_fetch-"+rand.Text()[:12])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, workspace.FSError("write", tmp, err)
	}
	keep := false
	defer func() {
		f.Close()
		if !keep {
			root.Remove(tmp)
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(body, max+1))
	if err != nil {
		return nil, legate.Errorf(legate.CodeTransient, "host: net_fetch: reading the download: %v", err)
	}
	if n > max {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: the download is over fetch_max_bytes (%d); nothing was kept", max)
	}
	if err := f.Chmod(0o644); err != nil { // whatever the umask, never executable
		return nil, workspace.FSError("write", tmp, err)
	}
	if err := f.Close(); err != nil {
		return nil, workspace.FSError("write", tmp, err)
	}
	target := filepath.Join(dir, name)
	if err := root.Rename(tmp, target); err != nil {
		return nil, workspace.FSError("write", target, err)
	}
	keep = true
	return &FetchResult{Path: filepath.ToSlash(target), Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil)), Mode: "0644"}, nil
}

package kb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/kb/extract"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// debounce is how long the watcher waits after a change for the next one
// before it reads what changed: an editor's save is several events.
const debounce = 100 * time.Millisecond

// startWatcher returns a watcher for the folders, nil when there are none
// or the system gives none (reported as a problem of each folder: they
// are then read once).
func (ix *indexer) startWatcher() *fsnotify.Watcher {
	if len(ix.c.cfg.Folders) == 0 {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		for _, f := range ix.c.cfg.Folders {
			ix.problems[filepath.Clean(f)] = "not watched, changes are not seen until a restart: " + err.Error()
		}
		return nil
	}
	return w
}

// loadTree reads every file the connector reads under dir, hidden folders
// and files skipped, and watches each folder with w (when not nil). The
// caller holds sem.
func (ix *indexer) loadTree(dir string, w *fsnotify.Watcher) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			ix.problems[p] = err.Error()
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if w != nil {
				if err := w.Add(p); err != nil {
					ix.problems[p] = "not watched: " + err.Error()
				}
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			ix.loadFile(p)
		}
		return nil
	})
	if err != nil {
		ix.problems[dir] = fmt.Sprintf("cannot be read: %v", unwrapPath(err))
		return
	}
	ix.owns(dir)
}

// loadFile reads the file at p into the index, if it is of a kind the
// connector reads. The caller holds sem.
func (ix *indexer) loadFile(p string) {
	kind := extract.KindOfName(p)
	if kind == "" {
		return
	}
	fi, err := os.Stat(p)
	if err != nil {
		ix.problems[p] = unwrapPath(err).Error()
		return
	}
	if !fi.Mode().IsRegular() {
		return
	}
	if fi.Size() > int64(ix.c.cfg.MaxDocumentBytes) {
		ix.problems[p] = fmt.Sprintf("skipped: %d bytes, over max_document_bytes (%d)", fi.Size(), ix.c.cfg.MaxDocumentBytes)
		delete(ix.docs, p)
		ix.touch(p)
		return
	}
	data, err := os.ReadFile(p)
	if err != nil {
		ix.problems[p] = unwrapPath(err).Error()
		return
	}
	name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	d, err := ix.newDocument(p, kind, name, data)
	if err != nil {
		ix.problems[p] = err.Error()
		delete(ix.docs, p)
		ix.touch(p)
		return
	}
	ix.add(d)
}

// remove drops the documents of p and of everything beneath it. The
// caller holds sem.
func (ix *indexer) remove(p string) {
	ix.owns(p)
	for src := range ix.docs {
		if under(src, p) {
			delete(ix.docs, src)
		}
	}
	for src := range ix.problems {
		if under(src, p) {
			delete(ix.problems, src)
		}
	}
}

// under reports whether the path src is dir or beneath it.
func under(src, dir string) bool {
	return src == dir || strings.HasPrefix(src, dir+string(filepath.Separator))
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// watch reads again what changes in the folders until the instance is
// closed: after a change and a quiet debounce, each path that changed is
// read again (a folder whole, a file alone) or dropped, and the index
// published.
func (ix *indexer) watch(w *fsnotify.Watcher) {
	defer ix.wg.Done()
	defer w.Close()
	pending := map[string]bool{}
	rescan := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ix.life.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			pending[ev.Name] = true
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				rescan = true // events were lost: read every folder again
				timer.Reset(debounce)
			}
		case <-timer.C:
			if err := ix.lock(ix.life); err != nil {
				return
			}
			if rescan {
				clear(pending)
				for src := range ix.docs {
					if !isURL(src) {
						delete(ix.docs, src)
					}
				}
				for src := range ix.problems {
					if !isURL(src) {
						delete(ix.problems, src)
					}
				}
				for _, f := range ix.c.cfg.Folders {
					ix.loadTree(filepath.Clean(f), w)
				}
				rescan = false
			}
			for p := range pending {
				ix.reload(p, w)
			}
			clear(pending)
			ix.publish()
			ix.unlock()
		}
	}
}

// reload reads p again: a folder whole (and watched), a file alone; gone,
// its documents are dropped. The caller holds sem.
func (ix *indexer) reload(p string, w *fsnotify.Watcher) {
	if strings.HasPrefix(filepath.Base(p), ".") {
		return
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		ix.remove(p)
	case fi.IsDir():
		ix.loadTree(p, w)
	default:
		ix.loadFile(p)
	}
}

func isURL(source string) bool {
	return strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://")
}

// fetchAll fetches every URL: one that fails keeps its last version and
// is reported. It reports whether a document changed. The caller holds
// sem.
func (ix *indexer) fetchAll(ctx context.Context) bool {
	changed := false
	for _, u := range ix.c.cfg.URLs {
		d, err := ix.fetch(ctx, u)
		if err != nil {
			if ix.problems[u] != err.Error() {
				changed = true
			}
			ix.problems[u] = err.Error()
			continue
		}
		if old, ok := ix.docs[u]; !ok || old.text != d.text || old.title != d.title || ix.problems[u] != "" {
			changed = true
		}
		ix.add(d)
	}
	return changed
}

// fetch GETs one URL and reads it as the kind its Content-Type says.
func (ix *indexer) fetch(ctx context.Context, raw string) (*document, error) {
	r := httpkit.Retry{MaxAttempts: 3, MaxElapsed: 30 * time.Second}
	resp, _, err := r.Do(ctx, ix.c.fetch, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/pdf;q=0.9, */*;q=0.1")
		return req, nil
	})
	if err != nil {
		return nil, httpkit.TransportError(ctx, err, "fetching "+raw)
	}
	defer httpkit.Drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, httpkit.StatusError(resp, fmt.Sprintf("fetching %s: the server answered %d %s", raw, resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	max := ix.c.cfg.MaxDocumentBytes
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, httpkit.TransportError(ctx, err, "reading "+raw)
	}
	if len(data) > max {
		return nil, fmt.Errorf("skipped: over max_document_bytes (%d)", max)
	}
	u, _ := netguard.ParseURL(raw)
	kind := extract.KindOfContentType(resp.Header.Get("Content-Type"), u.Path)
	if kind == "" {
		return nil, fmt.Errorf("skipped: content type %q is not HTML, Markdown, text or PDF", resp.Header.Get("Content-Type"))
	}
	name := strings.TrimSuffix(path.Base(u.Path), path.Ext(u.Path))
	if name == "" || name == "/" || name == "." {
		name = u.Host
	}
	return ix.newDocument(raw, kind, name, data)
}

// refresh fetches the URLs again every refresh_interval until the
// instance is closed, publishing the index when one changed.
func (ix *indexer) refresh() {
	defer ix.wg.Done()
	t := time.NewTicker(time.Duration(ix.c.cfg.RefreshInterval))
	defer t.Stop()
	for {
		select {
		case <-ix.life.Done():
			return
		case <-t.C:
		}
		if err := ix.lock(ix.life); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(ix.life, time.Duration(ix.c.cfg.Timeout)*time.Duration(len(ix.c.cfg.URLs)+1))
		if ix.fetchAll(ctx) && ix.life.Err() == nil {
			ix.publish()
		}
		cancel()
		ix.unlock()
	}
}

// Package skillstest serves skills repositories to tests as a remote
// caller names them: over git's smart HTTP protocol, with TLS.
package skillstest

import (
	"encoding/pem"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HTTPSRepo serves the files of dir, committed in a git repository, over
// git's smart HTTP protocol (git http-backend) with TLS, and returns the
// repository's URL; git trusts the server's certificate.
func HTTPSRepo(t testing.TB, dir string) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git is not installed")
	}
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	work, root := t.TempDir(), t.TempDir()
	if err := os.CopyFS(work, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "README"), []byte("skills\n"), 0o644)
	git("-C", work, "init", "-q")
	git("-C", work, "add", ".")
	git("-C", work, "commit", "-q", "-m", "skills")
	git("clone", "-q", "--bare", work, filepath.Join(root, "skills.git"))
	srv := httptest.NewTLSServer(&cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"), Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSL_CAINFO", ca)
	return srv.URL + "/skills.git"
}

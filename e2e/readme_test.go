package e2e_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

// readmeBlock is one fenced shell block of the README and its marker.
type readmeBlock struct {
	line       int
	script     string
	background bool
}

// readmeBlocks returns the README's runnable shell blocks, and fails t on a shell block that is
// neither marked runnable nor says why it is not.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```sh" {
			continue
		}
		marker := ""
		if i > 0 {
			marker = strings.TrimSpace(lines[i-1])
		}
		start := i + 1
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		switch {
		case marker == "<!-- runnable -->" || marker == "<!-- runnable: background -->":
			out = append(out, readmeBlock{line: start, script: strings.Join(body, "\n") + "\n", background: strings.Contains(marker, "background")})
		case strings.HasPrefix(marker, "<!-- not runnable by the README test: "):
		default:
			t.Errorf("README.md:%d: a shell block marked neither <!-- runnable --> nor <!-- not runnable by the README test: WHY -->", start)
		}
	}
	return out
}

// TestReadmeRuns runs the README's runnable shell blocks as written, in order, from the
// repository root, on a fresh state (an empty HOME and XDG directories): a background block
// (legate serve) is started and waited for on 127.0.0.1:8080, and each other block must exit 0.
func TestReadmeRuns(t *testing.T) {
	p := need(t)
	blocks := readmeBlocks(t)
	if len(blocks) == 0 {
		t.Fatal("README.md has no runnable block")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatalf("the README's commands use 127.0.0.1:8080, which is taken here: %v", err)
	}
	ln.Close()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	env := append(os.Environ(),
		"XDG_STATE_HOME="+filepath.Join(fresh, "state"), "XDG_CONFIG_HOME="+filepath.Join(fresh, "config"),
		"LEGATE_STATE_DIR=", "LEGATE_STORE=", "LEGATE_ADMIN_TOKEN=",
		"PATH="+filepath.Dir(p.node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"npm_config_prefer_offline=true", "npm_config_update_notifier=false", "npm_config_fund=false",
	)
	for _, b := range blocks {
		name := fmt.Sprintf("README.md:%d", b.line)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b.script)
		cmd.Dir, cmd.Env = root, env
		var out syncbuf.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if b.background {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				// go run's child serves: end the whole group.
				syscallKillGroup(cmd)
				<-exited
				if t.Failed() {
					t.Logf("%s output:\n%s", name, out.String())
				}
			})
			waitHealthy(t, name, "http://127.0.0.1:8080/healthz", exited, &out)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd = exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.script)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, env, &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("%s fails as written: %v\n%s\n%s", name, err, b.script, out.String())
		}
		t.Logf("%s ran:\n%s", name, out.String())
	}
}

// waitHealthy waits up to 3 minutes (go run builds first) for url to answer 200.
func waitHealthy(t *testing.T, name, url string, exited <-chan struct{}, out *syncbuf.Buffer) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case <-exited:
			t.Fatalf("%s exited before it served:\n%s", name, out.String())
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not healthy within 3 minutes:\n%s", name, url, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

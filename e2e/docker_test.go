package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The image's HEALTHCHECK runs `legate health`: against the binary the
// image holds, it passes for a serving Legate and fails for none.
func TestHealthCommand(t *testing.T) {
	t.Parallel()
	s := serve(t, upstreamConfig(t, ""))
	healthz := strings.TrimSuffix(s.url("127.0.0.1"), "/mcp") + "/healthz"
	if out, err := legateExec(t, nil, "health", "--url", healthz); err != nil || !strings.Contains(string(out), `"ok"`) {
		t.Fatalf("health of a serving legate: %s %v", out, err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	down := "http://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	if out, err := legateExec(t, nil, "health", "--url", down, "--timeout", "1s"); err == nil {
		t.Fatalf("health of no server passed: %s", out)
	}
}

// compose.yaml runs the image with deploy/config.yaml, which validates, and
// a state volume.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Build struct {
				Target string `yaml:"target"`
			} `yaml:"build"`
			Command []string `yaml:"command"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	svc, ok := compose.Services["legate"]
	if !ok || svc.Build.Target != "static" || len(compose.Volumes) != 1 {
		t.Fatalf("compose.yaml: %+v", compose)
	}
	for _, v := range svc.Volumes {
		src, _, _ := strings.Cut(v, ":")
		if strings.HasPrefix(src, ".") {
			if _, err := os.Stat(filepath.Join("..", src)); err != nil {
				t.Errorf("compose.yaml mounts %s: %v", src, err)
			}
		}
	}
	cfg, err := filepath.Abs("../deploy/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	legateCLI(t, "config", "validate", "--config", cfg)
}

// The image builds, and its HEALTHCHECK command runs in it, where a Docker
// engine runs; elsewhere (as on the test machines) only the binary it would
// hold is tested, above.
func TestDockerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := exec.CommandContext(ctx, "docker", "info").Run(); err != nil {
		t.Skipf("no Docker engine here (docker info: %v): the image is not built; TestHealthCommand tests the binary it holds", err)
	}
	for _, target := range []string{"static", "full"} {
		build := exec.CommandContext(ctx, "docker", "build", "--target", target, "-t", "legate-test:"+target, "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("docker build --target %s: %v\n%s", target, err, out)
		}
		run := exec.CommandContext(ctx, "docker", "run", "--rm", "legate-test:"+target, "version")
		if out, err := run.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "legate ") {
			t.Fatalf("docker run legate-test:%s version: %v\n%s", target, err, out)
		}
	}
}

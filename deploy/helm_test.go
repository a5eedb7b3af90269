// Package deploy_test checks the deployment files: the Helm chart lints,
// renders what its values promise, and holds a config Legate accepts.
package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/config"
)

const chart = "helm/legate"

// helm runs helm with args and returns its output; it skips the test where
// helm is not installed, and fails it under CI, which installs helm.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("helm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("helm is not on PATH; CI installs it (.ci/run)")
		}
		t.Skip("helm is not on PATH: the chart is not checked (.ci/run installs it)")
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New(strings.TrimSpace(stderr.String() + "\n" + err.Error()))
	}
	return out.String(), nil
}

func TestChartLints(t *testing.T) {
	out, err := helm(t, "lint", "--strict", chart)
	if err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// manifests are the rendered documents by kind.
func manifests(t *testing.T, rendered string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dec := yaml.NewDecoder(strings.NewReader(rendered))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("rendered YAML: %v", err)
		}
		if doc != nil {
			out[doc["kind"].(string)] = doc
		}
	}
}

// dig follows keys (and list indexes as ints) into a decoded document.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestChartRendersTheDefaults(t *testing.T) {
	out, err := helm(t, "template", "legate", chart)
	if err != nil {
		t.Fatal(err)
	}
	m := manifests(t, out)
	for _, kind := range []string{"Deployment", "Service", "ConfigMap", "PersistentVolumeClaim"} {
		if m[kind] == nil {
			t.Fatalf("no %s in:\n%s", kind, out)
		}
	}
	dep := m["Deployment"]
	pod := dig(dep, "spec", "template", "spec")
	c := dig(pod, "containers", 0)
	checks := map[string]struct{ got, want any }{
		"replicas":                 {dig(dep, "spec", "replicas"), 1},
		"strategy with SQLite":     {dig(dep, "spec", "strategy", "type"), "Recreate"},
		"runAsNonRoot":             {dig(pod, "securityContext", "runAsNonRoot"), true},
		"readOnlyRootFilesystem":   {dig(c, "securityContext", "readOnlyRootFilesystem"), true},
		"allowPrivilegeEscalation": {dig(c, "securityContext", "allowPrivilegeEscalation"), false},
		"liveness probe":           {dig(c, "livenessProbe", "httpGet", "path"), "/healthz"},
		"readiness probe":          {dig(c, "readinessProbe", "httpGet", "path"), "/readyz"},
		"state volume":             {dig(pod, "volumes", 1, "persistentVolumeClaim", "claimName"), "legate"},
		"state mount":              {dig(c, "volumeMounts", 1, "mountPath"), "/var/lib/legate"},
		"no service account token": {dig(pod, "automountServiceAccountToken"), false},
	}
	for name, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: %v, want %v", name, ch.got, ch.want)
		}
	}
	// The config the chart serves is one Legate accepts.
	doc, _ := dig(m["ConfigMap"], "data", "config.yaml").(string)
	cfg, err := config.Parse([]byte(doc), nil)
	if err != nil {
		t.Fatalf("the chart's config.yaml:\n%s\n%v", doc, err)
	}
	if cfg.Auth.Tokens == nil || !*cfg.Auth.Tokens {
		t.Errorf("the chart's default config leaves bearer tokens off on a pod listening on 0.0.0.0")
	}
}

func TestChartReplicasNeedAPostgresStore(t *testing.T) {
	if out, err := helm(t, "template", "legate", chart, "--set", "replicas=2"); err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("replicas=2 on SQLite rendered (%v):\n%s", err, out)
	}
	out, err := helm(t, "template", "legate", chart, "--set", "replicas=2", "--set", "storeSecret.name=pg", "--set", "persistence.enabled=false",
		"--set", "secretEnv[0].name=LEGATE_MASTER_KEY,secretEnv[0].secretName=legate,secretEnv[0].key=master-key")
	if err != nil {
		t.Fatal(err)
	}
	m := manifests(t, out)
	dep := m["Deployment"]
	if dig(dep, "spec", "replicas") != 2 || dig(dep, "spec", "strategy") != nil || m["PersistentVolumeClaim"] != nil {
		t.Errorf("replicas %v, strategy %v, claim %v", dig(dep, "spec", "replicas"), dig(dep, "spec", "strategy"), m["PersistentVolumeClaim"] != nil)
	}
	env := map[string]any{}
	for _, e := range dig(dep, "spec", "template", "spec", "containers", 0, "env").([]any) {
		env[dig(e, "name").(string)] = dig(e, "valueFrom", "secretKeyRef")
	}
	if ref := env["LEGATE_STORE"]; dig(ref, "name") != "pg" || dig(ref, "key") != "url" {
		t.Errorf("LEGATE_STORE from %v, want the secret pg, key url", ref)
	}
	if ref := env["LEGATE_MASTER_KEY"]; dig(ref, "name") != "legate" || dig(ref, "key") != "master-key" {
		t.Errorf("LEGATE_MASTER_KEY from %v", ref)
	}
	if strings.Contains(out, "master-key:") || strings.Contains(out, "kind: Secret") {
		t.Errorf("the chart renders a secret value or a Secret of its own")
	}
}

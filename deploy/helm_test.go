// Package deploy_test checks the deployment files: the Helm chart lints,
// renders what its values promise, holds a config Legate accepts, renders
// manifests the Kubernetes API types accept (schema_test.go), and its
// default install is scraped by Prometheus (scrape_test.go).
//
// It is a module of its own (deploy/go.mod), so that the Kubernetes and
// Prometheus Operator API types it decodes into stay out of Legate's
// go.mod; .ci/run runs it with `cd deploy && go test ./...`.
package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"

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

// allValues turns every option of the chart on.
const allValues = chart + "/ci/all-values.yaml"

func TestChartLints(t *testing.T) {
	for name, args := range map[string][]string{"defaults": nil, "every option": {"-f", allValues}} {
		out, err := helm(t, append([]string{"lint", "--strict", chart}, args...)...)
		if err != nil {
			t.Errorf("helm lint with %s: %v\n%s", name, err, out)
		}
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

func TestChartMetricsOptions(t *testing.T) {
	out, err := helm(t, "template", "legate", chart, "--set", "metrics.port=9100")
	if err != nil {
		t.Fatal(err)
	}
	m := manifests(t, out)
	cfg, err := config.Parse([]byte(dig(m["ConfigMap"], "data", "config.yaml").(string)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metrics.Listen != "0.0.0.0:9100" {
		t.Errorf("metrics.listen %q, want 0.0.0.0:9100 from metrics.port", cfg.Metrics.Listen)
	}
	if m["ServiceMonitor"] != nil {
		t.Errorf("a ServiceMonitor by default: the Prometheus Operator's CRDs may not be installed")
	}
	out, err = helm(t, "template", "legate", chart, "--set", "metrics.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"prometheus.io/", "name: metrics", "metrics:"} {
		if strings.Contains(out, s) {
			t.Errorf("metrics.enabled=false renders %q:\n%s", s, out)
		}
	}
	for name, args := range map[string][]string{
		"config.metrics set as well":        {"--set", "config.metrics.listen=0.0.0.0:1234"},
		"a ServiceMonitor without its port": {"--set", "metrics.enabled=false", "--set", "metrics.serviceMonitor.enabled=true"},
	} {
		if out, err := helm(t, append([]string{"template", "legate", chart}, args...)...); err == nil {
			t.Errorf("%s rendered:\n%s", name, out)
		}
	}
}

// apiTypes are the Kubernetes API types a rendered manifest is decoded
// into, by apiVersion and kind: those the chart renders, and those a chart
// like it grows (a template of another kind fails the test until its type
// is added here).
var apiTypes = map[string]func() any{
	"v1/ConfigMap":                            func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                               func() any { return new(corev1.Secret) },
	"v1/Service":                              func() any { return new(corev1.Service) },
	"v1/ServiceAccount":                       func() any { return new(corev1.ServiceAccount) },
	"v1/PersistentVolumeClaim":                func() any { return new(corev1.PersistentVolumeClaim) },
	"apps/v1/Deployment":                      func() any { return new(appsv1.Deployment) },
	"policy/v1/PodDisruptionBudget":           func() any { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return new(networkingv1.NetworkPolicy) },
	"networking.k8s.io/v1/Ingress":            func() any { return new(networkingv1.Ingress) },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return new(monitoringv1.ServiceMonitor) },
	"monitoring.coreos.com/v1/PrometheusRule": func() any { return new(monitoringv1.PrometheusRule) },
}

// objects are rendered manifests decoded into their API types, by kind.
type objects map[string]any

// decode splits rendered into its documents and decodes each strictly
// into its API type, as the API server does with fieldValidation=Strict:
// an unknown field, a field spelt in another case, a repeated key or a
// value of the wrong type is an error naming the manifest.
func decode(t *testing.T, rendered string) objects {
	t.Helper()
	out := objects{}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(rendered)))
	for {
		doc, err := docs.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("rendered YAML: %v", err)
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		j, err := sigsyaml.YAMLToJSONStrict(doc)
		if err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, doc)
		}
		if string(j) == "null" {
			continue // a template that rendered nothing
		}
		if err := json.Unmarshal(j, &head); err != nil {
			t.Fatalf("rendered manifest: %v\n%s", err, doc)
		}
		newType := apiTypes[head.APIVersion+"/"+head.Kind]
		if newType == nil {
			t.Errorf("%s %s: no API type to check it against (add it to apiTypes)", head.APIVersion, head.Kind)
			continue
		}
		obj := newType()
		strict, err := kjson.UnmarshalStrict(j, obj, kjson.DisallowUnknownFields)
		if err = errors.Join(append(strict, err)...); err != nil {
			t.Errorf("%s %s/%s does not decode as %T:\n%v", head.APIVersion, head.Kind, head.Metadata.Name, obj, err)
			continue
		}
		if _, dup := out[head.Kind]; dup {
			t.Errorf("two %s manifests", head.Kind)
		}
		out[head.Kind] = obj
	}
}

// Every manifest the chart renders, with its defaults and with every
// option on, is one the Kubernetes API accepts: it decodes strictly into
// its API type (the Prometheus Operator's for the ServiceMonitor), its
// names and labels are valid, and what refers to something by name or
// label finds it.
func TestChartMatchesTheKubernetesAPI(t *testing.T) {
	for name, args := range map[string][]string{"defaults": nil, "every option": {"-f", allValues}} {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", "legate", chart}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			objs := decode(t, out)
			want := []string{"ConfigMap", "Deployment", "Service", "PersistentVolumeClaim"}
			if name == "every option" {
				want = append(want, "ServiceMonitor")
			}
			for _, kind := range want {
				if objs[kind] == nil {
					t.Fatalf("no %s rendered:\n%s", kind, out)
				}
			}
			checkReferences(t, objs)
		})
	}
}

// checkReferences checks what strict decoding cannot: the validity of
// names, labels and port names, and that selectors and named ports find
// what they name.
func checkReferences(t *testing.T, objs objects) {
	t.Helper()
	dep := objs["Deployment"].(*appsv1.Deployment)
	svc := objs["Service"].(*corev1.Service)
	pod := dep.Spec.Template
	for kind, obj := range objs {
		meta := obj.(metav1.Object)
		isName := validation.IsDNS1123Subdomain
		if kind == "Service" {
			isName = validation.IsDNS1035Label
		}
		for _, msg := range isName(meta.GetName()) {
			t.Errorf("%s name %q: %s", kind, meta.GetName(), msg)
		}
		checkLabels(t, kind, meta.GetLabels())
	}
	checkLabels(t, "the pod template", pod.Labels)
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Deployment's selector %v does not select its pods (%v): %v", dep.Spec.Selector, pod.Labels, err)
	}
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service's selector %v does not select the pods (%v)", svc.Spec.Selector, pod.Labels)
	}
	podPorts := map[string]int32{}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			for _, msg := range validation.IsValidPortName(p.Name) {
				t.Errorf("container port name %q: %s", p.Name, msg)
			}
			podPorts[p.Name] = p.ContainerPort
		}
		for _, probe := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
			if probe != nil && probe.HTTPGet != nil && probe.HTTPGet.Port.Type == intstr.String && podPorts[probe.HTTPGet.Port.StrVal] == 0 {
				t.Errorf("a probe names the port %q, which the container does not have", probe.HTTPGet.Port.StrVal)
			}
		}
		for _, m := range c.VolumeMounts {
			if !slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
				t.Errorf("the mount %s names no volume", m.Name)
			}
		}
	}
	if cm := objs["ConfigMap"].(*corev1.ConfigMap); !slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.ConfigMap != nil && v.ConfigMap.Name == cm.Name
	}) {
		t.Errorf("no volume of the pod holds the ConfigMap %s", cm.Name)
	}
	svcPorts := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		svcPorts[p.Name] = true
		if p.TargetPort.Type == intstr.String && podPorts[p.TargetPort.StrVal] == 0 {
			t.Errorf("the Service's port %s targets %q, which the pod does not have", p.Name, p.TargetPort.StrVal)
		}
	}
	if sm, ok := objs["ServiceMonitor"].(*monitoringv1.ServiceMonitor); ok {
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(svc.Labels)) {
			t.Errorf("the ServiceMonitor's selector %v does not select the Service (%v): %v", sm.Spec.Selector, svc.Labels, err)
		}
		for _, e := range sm.Spec.Endpoints {
			if !svcPorts[e.Port] {
				t.Errorf("the ServiceMonitor scrapes the port %q, which the Service does not have", e.Port)
			}
		}
	}
}

func checkLabels(t *testing.T, what string, set map[string]string) {
	t.Helper()
	for k, v := range set {
		for _, msg := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
			t.Errorf("%s label %s=%q: %s", what, k, v, msg)
		}
	}
}

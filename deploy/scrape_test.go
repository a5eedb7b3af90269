package deploy_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// pod runs the container of a rendered Deployment on this machine: the
// image's entrypoint is the legate binary built from this checkout, each
// volume a directory (a ConfigMap's holding its files), each container
// port a free port of 127.0.0.1. The pod's paths and 0.0.0.0:PORT
// addresses in the container's args, its env and its ConfigMap's files
// are replaced by the local ones.
type pod struct {
	ports map[int32]int // container port → local port
	named map[string]int32
	spec  corev1.Container
}

// local is the address of the container's port on this machine.
func (p *pod) local(port intstr.IntOrString) string {
	n := port.IntVal
	if port.Type == intstr.String {
		n = p.named[port.StrVal]
	}
	if p.ports[n] == 0 {
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(p.ports[n])
}

func startPod(t *testing.T, dep *appsv1.Deployment, cm *corev1.ConfigMap) *pod {
	t.Helper()
	spec := dep.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("the pod has %d containers and %d init containers, want the one legate container", len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	if len(c.Command) != 0 {
		t.Fatalf("the container's command %v replaces the image's entrypoint, /legate", c.Command)
	}
	p := &pod{ports: map[int32]int{}, named: map[string]int32{}, spec: c}
	var pairs []string // old, new for strings.NewReplacer
	for _, cp := range c.Ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p.ports[cp.ContainerPort] = ln.Addr().(*net.TCPAddr).Port
		p.named[cp.Name] = cp.ContainerPort
		ln.Close()
		pairs = append(pairs, fmt.Sprintf("0.0.0.0:%d", cp.ContainerPort), p.local(intstr.FromInt32(cp.ContainerPort)))
	}
	volumes := map[string]string{}
	for _, v := range spec.Volumes {
		dir := t.TempDir()
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != cm.Name {
				t.Fatalf("the volume %s holds the ConfigMap %s, not the chart's %s", v.Name, v.ConfigMap.Name, cm.Name)
			}
			volumes[v.Name] = dir
		case v.PersistentVolumeClaim != nil, v.EmptyDir != nil:
			volumes[v.Name] = dir
		default:
			t.Fatalf("the volume %s is of a kind this test does not make", v.Name)
		}
	}
	for _, m := range c.VolumeMounts {
		pairs = append(pairs, m.MountPath, volumes[m.Name])
	}
	rewrite := strings.NewReplacer(pairs...).Replace
	for name, data := range cm.Data {
		local := rewrite(data)
		if strings.Contains(local, "0.0.0.0") {
			t.Fatalf("the ConfigMap's %s listens on an address that is no container port:\n%s", name, data)
		}
		if err := os.WriteFile(filepath.Join(volumes[volumeOf(spec, cm.Name)], name), []byte(local), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = rewrite(a)
		if strings.Contains(args[i], "0.0.0.0") {
			t.Fatalf("the argument %q listens on an address that is no container port", a)
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("the default install reads %s from %v: it would need a Secret made beforehand", e.Name, e.ValueFrom)
		}
		env = append(env, e.Name+"="+rewrite(e.Value))
	}
	if len(c.EnvFrom) != 0 {
		t.Fatalf("the default install reads its environment from %v", c.EnvFrom)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, legateBinary(t), args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := cmd.Wait(); err != nil && ctx.Err() == nil || t.Failed() {
			t.Logf("legate %s: %v\n%s", strings.Join(args, " "), err, logs.String())
		}
	})
	// Ready as the kubelet sees it: the readiness probe answers 2xx.
	probe := c.ReadinessProbe.HTTPGet
	url := strings.ToLower(string(probe.Scheme)) + "://" + p.local(probe.Port) + probe.Path
	if probe.Scheme == "" {
		url = "http://" + p.local(probe.Port) + probe.Path
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return p
			}
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the readiness probe %s did not pass in 60s (%v):\n%s", url, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// volumeOf names the pod's volume that holds the ConfigMap name.
func volumeOf(spec corev1.PodSpec, name string) string {
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == name {
			return v.Name
		}
	}
	return ""
}

// legateBinary builds cmd/legate of this checkout, as the image does.
func legateBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "legate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/legate")
	build.Dir = ".." // the module root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/legate: %v\n%s", err, out)
	}
	return bin
}

// scrape gets url as Prometheus does and returns the metric families it
// parsed from the answer.
func scrape(t *testing.T, what, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: GET %s: %s\n%s", what, url, resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("%s: Content-Type %q, want Prometheus text", what, ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: not Prometheus text: %v\n%s", what, err, body)
	}
	return fams
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The default install is scraped: legate runs as the rendered Deployment
// runs it (its args, env and ConfigMap, authentication on), and a GET of
// the target the pod annotations describe, then of the one the
// ServiceMonitor describes through the Service, answers 200 with the
// series in Prometheus text, with no token; /mcp and /metrics on the http
// port still ask for one.
func TestDefaultInstallIsScraped(t *testing.T) {
	out, err := helm(t, "template", "legate", chart)
	if err != nil {
		t.Fatal(err)
	}
	objs := decode(t, out)
	dep, cm := objs["Deployment"].(*appsv1.Deployment), objs["ConfigMap"].(*corev1.ConfigMap)
	withMonitor, err := helm(t, "template", "legate", chart, "--set", "metrics.serviceMonitor.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	mon := decode(t, withMonitor)
	for _, kind := range []string{"Deployment", "ConfigMap", "Service"} {
		if !reflect.DeepEqual(mon[kind], objs[kind]) {
			t.Fatalf("turning the ServiceMonitor on changes the %s", kind)
		}
	}
	p := startPod(t, dep, cm)

	// Discovery by pod annotations (kubernetes_sd_configs role: pod).
	ann := dep.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" {
		t.Fatalf("the pods are not annotated for scraping: %v", ann)
	}
	port, err := strconv.Atoi(ann["prometheus.io/port"])
	if err != nil {
		t.Fatalf("prometheus.io/port %q: %v", ann["prometheus.io/port"], err)
	}
	addr := p.local(intstr.FromInt(port))
	if addr == "" {
		t.Fatalf("prometheus.io/port %d is no port of the container %v", port, p.spec.Ports)
	}
	scheme := cmp.Or(ann["prometheus.io/scheme"], "http")
	fams := scrape(t, "the annotations' target", scheme+"://"+addr+cmp.Or(ann["prometheus.io/path"], "/metrics"))
	for _, name := range []string{"legate_catalog_tools", "legate_approvals_pending", "legate_policy_decisions_total"} {
		if fams[name] == nil {
			t.Errorf("the annotations' target has no %s among %v", name, slices.Sorted(maps.Keys(fams)))
		}
	}

	// Discovery by the ServiceMonitor: its endpoint's port is the
	// Service's, whose targetPort is the pod's.
	sm := mon["ServiceMonitor"].(*monitoringv1.ServiceMonitor)
	svc := mon["Service"].(*corev1.Service)
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints, want 1", len(sm.Spec.Endpoints))
	}
	e := sm.Spec.Endpoints[0]
	if e.BearerTokenFile != "" || e.Authorization != nil || e.BasicAuth != nil || e.OAuth2 != nil || e.BearerTokenSecret != nil {
		t.Errorf("the ServiceMonitor sends credentials the default install does not make: %+v", e)
	}
	var target string
	for _, sp := range svc.Spec.Ports {
		if sp.Name == e.Port {
			target = p.local(sp.TargetPort)
		}
	}
	if target == "" {
		t.Fatalf("the ServiceMonitor's port %q is no port of the Service %v reaching the pod", e.Port, svc.Spec.Ports)
	}
	fams = scrape(t, "the ServiceMonitor's target", cmp.Or(e.Scheme.String(), "http")+"://"+target+cmp.Or(e.Path, "/metrics"))
	if fams["legate_catalog_tools"] == nil {
		t.Errorf("the ServiceMonitor's target has no legate_catalog_tools")
	}

	// The metrics port serves the series alone; the http port still asks
	// for a token, /metrics there included.
	if code := status(t, "http://"+target+"/mcp"); code != http.StatusNotFound {
		t.Errorf("GET /mcp on the metrics port: %d, want 404", code)
	}
	main := p.local(intstr.FromString("http"))
	for _, path := range []string{"/metrics", "/mcp"} {
		if code := status(t, "http://"+main+path); code != http.StatusUnauthorized {
			t.Errorf("GET %s on the http port without a token: %d, want 401 (authentication is on)", path, code)
		}
	}
}

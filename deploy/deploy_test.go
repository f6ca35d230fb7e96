// Package deploy holds the deployment files (Dockerfile, compose file,
// Kubernetes manifests, example configurations, Spark and DuckDB examples).
// Its tests check them against the exporter they deploy: every YAML file
// parses, the manifests have what Kubernetes and the exporter need, and
// every configuration key and command-line flag they use is one that the
// exporter, built exactly as the Dockerfile builds it, knows.
package deploy

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// dockerBuild is the build command of the Dockerfile; buildExporter runs the
// same command here.
const dockerBuild = `CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/exporter ./cmd/exporter`

// pendingFlags are flags that another change is adding to the exporter.
// The deploy files already use them; until the binary knows them, the key
// checks accept them and log that they did.
var pendingFlags = []string{
	"metrics-addr", // /metrics, /healthz and /readyz: the probes and the compose file use it
}

var (
	tmpRoot string

	buildOnce sync.Once
	exporter  string
	buildErr  error

	flagsOnce sync.Once
	flagSet   map[string]flagInfo
	flagsErr  error
)

// flagInfo is what `exporter run --help` says about one long flag.
type flagInfo struct {
	mapValued bool // --type-hint=KEY=VALUE;...: a YAML mapping in a config file
	pending   bool // not in the binary yet (pendingFlags)
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the module root: go test runs in deploy/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// buildExporter builds cmd/exporter once per test run, with CGO_ENABLED=0,
// -trimpath and -ldflags="-s -w": the Dockerfile's command.
func buildExporter(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		exporter = filepath.Join(tmpRoot, "exporter")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", exporter, "./cmd/exporter")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("CGO_ENABLED=0 go build ./cmd/exporter: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return exporter
}

// cleanEnv is an environment without EXPORTER_* and AWS_* variables, so
// that nothing but the arguments and the config file configures a run.
func cleanEnv() []string {
	env := []string{"HOME=" + tmpRoot, "PATH=" + os.Getenv("PATH")}
	if tz := os.Getenv("TZ"); tz != "" {
		env = append(env, "TZ="+tz)
	}
	return env
}

// runExporter runs the built binary and returns its exit code and output.
func runExporter(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runExporterEnv(t, nil, args...)
}

// runExporterEnv is runExporter with extra environment variables.
func runExporterEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(buildExporter(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Dir = tmpRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("exporter %s: %v", strings.Join(args, " "), err)
	return -1, "", ""
}

// helpFlag matches a flag line of kong's help: "  -h, --help ...",
// "      --file-max-age=5m ...", "      --[no-]before-image ...".
var helpFlag = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--(\[no-\])?([a-z0-9][a-z0-9-]*)(=\S*)?`)

// exporterFlags returns the long flag names of `exporter run --help`.
func exporterFlags(t *testing.T) map[string]flagInfo {
	t.Helper()
	flagsOnce.Do(func() {
		code, out, errOut := runExporter(t, "run", "--help")
		if code != 0 {
			flagsErr = fmt.Errorf("exporter run --help: exit %d\n%s%s", code, out, errOut)
			return
		}
		flagSet = map[string]flagInfo{}
		for line := range strings.SplitSeq(out, "\n") {
			if m := helpFlag.FindStringSubmatch(line); m != nil {
				flagSet[m[2]] = flagInfo{mapValued: strings.Contains(m[3], "KEY=VALUE")}
			}
		}
		for _, want := range []string{"source", "sink", "file-max-age", "compression", "before-image", "type-hint"} {
			if _, ok := flagSet[want]; !ok {
				flagsErr = fmt.Errorf("exporter run --help does not list --%s; the help parser is out of date:\n%s", want, out)
				return
			}
		}
		for _, p := range pendingFlags {
			if _, ok := flagSet[p]; !ok {
				flagSet[p] = flagInfo{pending: true}
			}
		}
	})
	if flagsErr != nil {
		t.Fatal(flagsErr)
	}
	for name, f := range flagSet {
		if f.pending {
			t.Logf("--%s is not in this binary's help yet (being added); accepted as known", name)
		}
	}
	return flagSet
}

// yamlFiles lists every *.yaml and *.yml file under deploy/.
func yamlFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// decodeAll decodes every document of a YAML stream; empty documents
// (comments only) are skipped.
func decodeAll(data []byte) ([]yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) > 0 && n.Content[0].Kind != 0 && !(n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			docs = append(docs, n)
		}
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestYAMLFilesParse: every YAML file under deploy/ (multi-document files
// too) parses, has at least one document, and no mapping repeats a key.
func TestYAMLFilesParse(t *testing.T) {
	files := yamlFiles(t)
	for _, want := range []string{"compose.yaml", "kubernetes/configmap.yaml", "kubernetes/secret.yaml",
		"kubernetes/deployment.yaml", "kubernetes/cronjob.yaml", "examples/exporter-aws-s3.yaml", "examples/exporter-minio.yaml"} {
		if !slices.Contains(files, filepath.FromSlash(want)) {
			t.Errorf("deploy/%s is missing", want)
		}
	}
	for _, f := range files {
		docs, err := decodeAll(readFile(t, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(docs) == 0 {
			t.Errorf("%s: no YAML document", f)
		}
		for i, d := range docs {
			var v any
			if err := d.Decode(&v); err != nil {
				t.Errorf("%s, document %d: %v", f, i+1, err)
			}
		}
	}
}

// Kubernetes shapes: only the fields the tests look at.

type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       yaml.Node         `yaml:"spec"`
}

type podTemplate struct {
	Metadata struct {
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec podSpec `yaml:"spec"`
}

type podSpec struct {
	TerminationGracePeriodSeconds *int   `yaml:"terminationGracePeriodSeconds"`
	RestartPolicy                 string `yaml:"restartPolicy"`
	SecurityContext               *struct {
		RunAsNonRoot *bool `yaml:"runAsNonRoot"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
	Volumes    []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name  string `yaml:"name"`
			Items []struct {
				Key  string `yaml:"key"`
				Path string `yaml:"path"`
			} `yaml:"items"`
		} `yaml:"configMap"`
	} `yaml:"volumes"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Ports   []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	EnvFrom []struct {
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	LivenessProbe   *probe `yaml:"livenessProbe"`
	ReadinessProbe  *probe `yaml:"readinessProbe"`
	StartupProbe    *probe `yaml:"startupProbe"`
	SecurityContext *struct {
		RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

type deploymentSpec struct {
	Replicas *int `yaml:"replicas"`
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
	Template podTemplate `yaml:"template"`
}

type cronJobSpec struct {
	Schedule          string `yaml:"schedule"`
	ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
	JobTemplate       struct {
		Spec struct {
			Template podTemplate `yaml:"template"`
		} `yaml:"spec"`
	} `yaml:"jobTemplate"`
}

// manifests decodes every document of deploy/kubernetes/*.yaml.
func manifests(t *testing.T) map[string][]k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/kubernetes/*.yaml: %v", err)
	}
	byKind := map[string][]k8sObject{}
	for _, f := range files {
		docs, err := decodeAll(readFile(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, d := range docs {
			var o k8sObject
			if err := d.Decode(&o); err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			where := fmt.Sprintf("%s, document %d", f, i+1)
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: apiVersion %q, kind %q, metadata.name %q: all three are required", where, o.APIVersion, o.Kind, o.Metadata.Name)
			}
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	return byKind
}

func one(t *testing.T, byKind map[string][]k8sObject, kind string) k8sObject {
	t.Helper()
	if len(byKind[kind]) != 1 {
		t.Fatalf("want one %s in deploy/kubernetes, have %d", kind, len(byKind[kind]))
	}
	return byKind[kind][0]
}

// configArg returns the value of --config in args (--config X or --config=X).
func configArg(args []string) string {
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v
		}
	}
	return ""
}

// checkPod checks what the Deployment and the CronJob share: containers with
// images, the config mounted where --config points, from the ConfigMap, the
// Secret as environment, a locked-down security context and resources.
func checkPod(t *testing.T, what string, pod podTemplate, cm, secret k8sObject) container {
	t.Helper()
	spec := pod.Spec
	if len(spec.Containers) == 0 {
		t.Fatalf("%s: no containers", what)
	}
	for _, c := range spec.Containers {
		if c.Name == "" || c.Image == "" {
			t.Errorf("%s: container %q has no name or no image", what, c.Name)
		}
	}
	c := spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Errorf("%s: args %q do not start with the run command", what, c.Args)
	}

	// --config points into the config volume, which is the ConfigMap,
	// whose data has that file.
	cfg := configArg(c.Args)
	if cfg == "" {
		t.Errorf("%s: no --config in args %q", what, c.Args)
	} else {
		dir, file := path.Split(cfg)
		dir = strings.TrimSuffix(dir, "/")
		var volume string
		for _, m := range c.VolumeMounts {
			if path.Clean(m.MountPath) == dir {
				volume = m.Name
			}
		}
		if volume == "" {
			t.Errorf("%s: --config %s, but no volume is mounted at %s (mounts %+v)", what, cfg, dir, c.VolumeMounts)
		}
		found := false
		for _, v := range spec.Volumes {
			if v.Name != volume || volume == "" {
				continue
			}
			found = true
			if v.ConfigMap == nil || v.ConfigMap.Name != cm.Metadata.Name {
				t.Errorf("%s: volume %q is not the ConfigMap %q", what, volume, cm.Metadata.Name)
				continue
			}
			key := file
			for _, it := range v.ConfigMap.Items {
				if it.Path == file {
					key = it.Key
				}
			}
			if _, ok := cm.Data[key]; !ok {
				t.Errorf("%s: --config %s needs key %q in ConfigMap %s, which has %v", what, cfg, key, cm.Metadata.Name, slices.Sorted(maps.Keys(cm.Data)))
			}
		}
		if volume != "" && !found {
			t.Errorf("%s: volume %q is mounted but not declared", what, volume)
		}
	}

	// AWS keys from the Secret
	fromSecret := false
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil && e.SecretRef.Name == secret.Metadata.Name {
			fromSecret = true
		}
	}
	if !fromSecret {
		t.Errorf("%s: envFrom does not reference Secret %q", what, secret.Metadata.Name)
	}

	// security: non-root (pod or container level), read-only root, no
	// privilege escalation, no capabilities
	nonRoot := spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot
	sc := c.SecurityContext
	if sc != nil && sc.RunAsNonRoot != nil {
		nonRoot = *sc.RunAsNonRoot
	}
	if !nonRoot {
		t.Errorf("%s: runAsNonRoot is not true", what)
	}
	if sc == nil {
		t.Errorf("%s: container has no securityContext", what)
	} else {
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: readOnlyRootFilesystem is not true", what)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", what)
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("%s: capabilities.drop does not include ALL: %v", what, sc.Capabilities.Drop)
		}
	}
	for _, r := range []string{"cpu", "memory"} {
		if c.Resources.Requests[r] == "" {
			t.Errorf("%s: no resources.requests.%s", what, r)
		}
	}
	if c.Resources.Limits["memory"] == "" {
		t.Errorf("%s: no resources.limits.memory", what)
	}
	// Shutdown flushes, uploads and checkpoints: it needs more than the
	// default 30 s.
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g < 60 {
		t.Errorf("%s: terminationGracePeriodSeconds %v, want at least 60 (shutdown flushes and checkpoints)", what, g)
	}
	return c
}

// probePort resolves a probe's port (a number or a container port's name).
func probePort(c container, port any) int {
	switch p := port.(type) {
	case int:
		return p
	case string:
		if n, err := strconv.Atoi(p); err == nil {
			return n
		}
		for _, cp := range c.Ports {
			if cp.Name == p {
				return cp.ContainerPort
			}
		}
	}
	return 0
}

// metricsPort is the port of --metrics-addr in the exporter's config.
func metricsPort(t *testing.T, cm k8sObject) int {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["exporter.yaml"]), &cfg); err != nil {
		t.Fatalf("ConfigMap exporter.yaml: %v", err)
	}
	addr, _ := cfg["metrics-addr"].(string)
	_, port, ok := strings.Cut(addr, ":")
	n, err := strconv.Atoi(port)
	if !ok || err != nil {
		t.Fatalf("ConfigMap exporter.yaml: metrics-addr %q is not HOST:PORT", addr)
	}
	return n
}

// TestKubernetesManifests: apiVersion/kind/metadata.name everywhere; the
// Deployment and the CronJob select their own pods, run the image with the
// config the ConfigMap holds, the Secret as environment, a locked-down
// security context; the Deployment probes /healthz and /readyz on the
// metrics port the config opens, and is scraped there.
func TestKubernetesManifests(t *testing.T) {
	byKind := manifests(t)
	cm := one(t, byKind, "ConfigMap")
	secret := one(t, byKind, "Secret")
	if _, ok := cm.Data["exporter.yaml"]; !ok {
		t.Errorf("ConfigMap %s has no exporter.yaml", cm.Metadata.Name)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := secret.StringData[k]; !ok {
			t.Errorf("Secret %s: no stringData.%s", secret.Metadata.Name, k)
		}
	}
	port := metricsPort(t, cm)

	t.Run("Deployment", func(t *testing.T) {
		d := one(t, byKind, "Deployment")
		if d.APIVersion != "apps/v1" {
			t.Errorf("apiVersion %q", d.APIVersion)
		}
		var spec deploymentSpec
		if err := d.Spec.Decode(&spec); err != nil {
			t.Fatal(err)
		}
		if spec.Replicas == nil || *spec.Replicas < 2 {
			t.Errorf("replicas %v, want 2 (one consumer group)", spec.Replicas)
		}
		if len(spec.Selector.MatchLabels) == 0 {
			t.Error("selector.matchLabels is empty")
		}
		for k, v := range spec.Selector.MatchLabels {
			if spec.Template.Metadata.Labels[k] != v {
				t.Errorf("selector %s=%s does not match the template's labels %v", k, v, spec.Template.Metadata.Labels)
			}
		}
		c := checkPod(t, "Deployment", spec.Template, cm, secret)
		for _, p := range []struct {
			name, path string
			probe      *probe
		}{{"livenessProbe", "/healthz", c.LivenessProbe}, {"readinessProbe", "/readyz", c.ReadinessProbe}} {
			if p.probe == nil || p.probe.HTTPGet == nil {
				t.Errorf("no httpGet %s", p.name)
				continue
			}
			if p.probe.HTTPGet.Path != p.path {
				t.Errorf("%s path %q, want %s", p.name, p.probe.HTTPGet.Path, p.path)
			}
			if got := probePort(c, p.probe.HTTPGet.Port); got != port {
				t.Errorf("%s port %v (%d), want the metrics-addr port %d", p.name, p.probe.HTTPGet.Port, got, port)
			}
		}
		if c.StartupProbe != nil && c.StartupProbe.HTTPGet != nil && probePort(c, c.StartupProbe.HTTPGet.Port) != port {
			t.Errorf("startupProbe port %v, want %d", c.StartupProbe.HTTPGet.Port, port)
		}
		a := spec.Template.Metadata.Annotations
		if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(port) || a["prometheus.io/path"] != "/metrics" {
			t.Errorf("prometheus annotations %v, want scrape=true, port=%d, path=/metrics", a, port)
		}
		if slices.Contains(c.Args, "--once") {
			t.Error("the Deployment is the continuous consumer; --once belongs to the CronJob")
		}
	})

	t.Run("CronJob", func(t *testing.T) {
		cj := one(t, byKind, "CronJob")
		if cj.APIVersion != "batch/v1" {
			t.Errorf("apiVersion %q", cj.APIVersion)
		}
		var spec cronJobSpec
		if err := cj.Spec.Decode(&spec); err != nil {
			t.Fatal(err)
		}
		if spec.Schedule != "*/15 * * * *" {
			t.Errorf("schedule %q, want every 15 minutes", spec.Schedule)
		}
		if spec.ConcurrencyPolicy != "Forbid" {
			t.Errorf("concurrencyPolicy %q, want Forbid", spec.ConcurrencyPolicy)
		}
		pod := spec.JobTemplate.Spec.Template
		if rp := pod.Spec.RestartPolicy; rp != "Never" && rp != "OnFailure" {
			t.Errorf("restartPolicy %q: a Job's pod needs Never or OnFailure", rp)
		}
		c := checkPod(t, "CronJob", pod, cm, secret)
		if !slices.Contains(c.Args, "--once") {
			t.Errorf("args %q: a CronJob run must drain and exit (--once)", c.Args)
		}
	})
}

type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Entrypoint  stringList        `yaml:"entrypoint"`
		Command     stringList        `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Expose      []string          `yaml:"expose"`
		Healthcheck *struct {
			Test stringList `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

// stringList is a compose command: a list, or a string split at spaces.
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = strings.Fields(n.Value)
		return nil
	}
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	var c composeFile
	if err := yaml.Unmarshal(readFile(t, "compose.yaml"), &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

// flagValue returns the value of --name in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// TestCompose: the four services; the exporter is built from this
// Dockerfile, starts after the bucket exists and Kafka is healthy, writes to
// the bucket createbucket makes, through MinIO, and exposes its metrics port.
func TestCompose(t *testing.T) {
	c := loadCompose(t)
	for _, s := range []string{"minio", "createbucket", "kafka", "exporter"} {
		if _, ok := c.Services[s]; !ok {
			t.Fatalf("compose.yaml has no service %q", s)
		}
	}
	minio, bucket, kafka, exp := c.Services["minio"], c.Services["createbucket"], c.Services["kafka"], c.Services["exporter"]

	if minio.Healthcheck == nil || !strings.Contains(strings.Join(minio.Healthcheck.Test, " "), "/minio/health/ready") {
		t.Error("minio: no healthcheck on /minio/health/ready")
	}
	if kafka.Healthcheck == nil || !strings.Contains(strings.Join(kafka.Healthcheck.Test, " "), "kafka-topics.sh") ||
		!slices.Contains(kafka.Healthcheck.Test, "--list") {
		t.Error("kafka: no healthcheck with kafka-topics.sh --list")
	}
	if bucket.DependsOn["minio"].Condition != "service_healthy" {
		t.Errorf("createbucket depends_on minio %+v, want condition service_healthy", bucket.DependsOn)
	}
	if got := exp.DependsOn["createbucket"].Condition; got != "service_completed_successfully" {
		t.Errorf("exporter depends_on createbucket condition %q, want service_completed_successfully", got)
	}
	if got := exp.DependsOn["kafka"].Condition; got != "service_healthy" {
		t.Errorf("exporter depends_on kafka condition %q, want service_healthy", got)
	}

	if exp.Build == nil {
		t.Fatal("exporter: no build section")
	}
	if exp.Build.Context != ".." || exp.Build.Dockerfile != "deploy/Dockerfile" {
		t.Errorf("exporter build %+v, want context .. and dockerfile deploy/Dockerfile", *exp.Build)
	}
	if _, err := os.Stat(filepath.Join(exp.Build.Context, exp.Build.Dockerfile)); err != nil {
		t.Errorf("exporter build: %v", err)
	}

	if exp.Environment["AWS_ENDPOINT_URL_S3"] != "http://minio:9000" {
		t.Errorf("exporter AWS_ENDPOINT_URL_S3 %q", exp.Environment["AWS_ENDPOINT_URL_S3"])
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		if exp.Environment[k] == "" {
			t.Errorf("exporter: no %s", k)
		}
	}
	if len(exp.Command) == 0 || exp.Command[0] != "run" {
		t.Fatalf("exporter command %q does not start with run", exp.Command)
	}
	src := flagValue(exp.Command, "source")
	if !strings.HasPrefix(src, "kafka://kafka:9092/") || !strings.Contains(src, "group=") {
		t.Errorf("exporter --source %q: want kafka://kafka:9092/TOPIC?group=NAME", src)
	}
	sink := flagValue(exp.Command, "sink")
	b, _, _ := strings.Cut(strings.TrimPrefix(sink, "s3://"), "/")
	if !strings.HasPrefix(sink, "s3://") || !strings.Contains(strings.Join(bucket.Entrypoint, " "), "local/"+b) {
		t.Errorf("exporter --sink %q: createbucket (%q) does not create bucket %q", sink, bucket.Entrypoint, b)
	}
	addr := flagValue(exp.Command, "metrics-addr")
	_, port, _ := strings.Cut(addr, ":")
	if port == "" || !slices.Contains(exp.Expose, port) {
		t.Errorf("exporter --metrics-addr %q, expose %q: the metrics port is not exposed", addr, exp.Expose)
	}
}

// yamlKeys returns the top-level keys of a YAML mapping, and which of them
// hold a mapping.
func yamlKeys(t *testing.T, what string, data []byte) map[string]bool {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s: not a YAML mapping", what)
	}
	keys := map[string]bool{}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys[m.Content[i].Value] = m.Content[i+1].Kind == yaml.MappingNode
	}
	return keys
}

// configFiles returns every exporter configuration in deploy/: the
// ConfigMap's exporter.yaml and examples/*.yaml.
func configFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	cm := one(t, manifests(t), "ConfigMap")
	for k, v := range cm.Data {
		out["kubernetes/configmap.yaml:"+k] = []byte(v)
	}
	ex, err := filepath.Glob(filepath.Join("examples", "*.yaml"))
	if err != nil || len(ex) < 2 {
		t.Fatalf("deploy/examples/*.yaml: %v %v", ex, err)
	}
	for _, f := range ex {
		out[filepath.ToSlash(f)] = readFile(t, f)
	}
	return out
}

// commandLines returns every exporter command line in deploy/: the compose
// command, the Kubernetes args and the Dockerfile's CMD.
func commandLines(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{"compose.yaml exporter command": loadCompose(t).Services["exporter"].Command}
	byKind := manifests(t)
	dep, cron := one(t, byKind, "Deployment"), one(t, byKind, "CronJob")
	var d deploymentSpec
	if err := dep.Spec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	var cj cronJobSpec
	if err := cron.Spec.Decode(&cj); err != nil {
		t.Fatal(err)
	}
	out["Deployment args"] = d.Template.Spec.Containers[0].Args
	out["CronJob args"] = cj.JobTemplate.Spec.Template.Spec.Containers[0].Args
	out["Dockerfile CMD"] = dockerfileExec(t, "CMD")
	return out
}

// TestConfigKeysAndFlagsAreReal: every key of every exporter configuration
// in deploy/ and every flag on every command line is a long flag of
// `exporter run --help` (the config loader rejects unknown keys); a mapping
// is only given to a map flag (--type-hint).
func TestConfigKeysAndFlagsAreReal(t *testing.T) {
	flags := exporterFlags(t)
	for name, data := range configFiles(t) {
		keys := yamlKeys(t, name, data)
		if len(keys) == 0 {
			t.Errorf("%s: no keys", name)
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			f, ok := flags[k]
			switch {
			case !ok:
				t.Errorf("%s: key %q is not a flag of exporter run (see exporter run --help)", name, k)
			case keys[k] && !f.mapValued && !f.pending:
				t.Errorf("%s: key %q is a mapping, but --%s takes no KEY=VALUE pairs", name, k, k)
			case !keys[k] && f.mapValued:
				t.Errorf("%s: key %q takes a mapping (TABLE:COLUMN: TYPE)", name, k)
			}
		}
		for _, req := range []string{"source", "sink"} {
			if _, ok := keys[req]; !ok {
				t.Errorf("%s: no %s", name, req)
			}
		}
	}
	for name, args := range commandLines(t) {
		if len(args) == 0 || args[0] != "run" {
			t.Errorf("%s %q: does not start with run", name, args)
			continue
		}
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			f, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if _, ok := flags[f]; !ok {
				t.Errorf("%s: %s is not a flag of exporter run", name, a)
			}
		}
	}
}

// secretEnv is what the deploy files say comes from the environment (a
// Secret), never from a config file.
var secretEnv = []string{
	"EXPORTER_KAFKA_PASSWORD=example-password",
	"EXPORTER_S3_ACCESS_KEY_ID=example-key-id",
	"EXPORTER_S3_SECRET_ACCESS_KEY=example-secret",
}

// TestConfigsRun: every configuration in deploy/ is accepted by the binary
// (types, enums, durations, type hints, settings that must go together;
// not just key names). `exporter validate` checks each file as it is, with
// the secrets in the environment; then it runs, in the CronJob's argument
// order, with its source and sink replaced by the bundled sample and a
// temporary folder, and must exit 0.
func TestConfigsRun(t *testing.T) {
	flags := exporterFlags(t)
	sample := filepath.Join(repoRoot(t), "testdata", "goldengate", "sample.jsonl")
	_, help, _ := runExporter(t, "--help")
	hasValidate := regexp.MustCompile(`(?m)^\s+validate\b`).MatchString(help)
	if !hasValidate {
		t.Log("this exporter has no validate command; the configs are only run")
	}
	for name, data := range configFiles(t) {
		t.Run(strings.NewReplacer("/", "_", ":", "_").Replace(name), func(t *testing.T) {
			dir := t.TempDir()
			var cfg map[string]any
			if err := yaml.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			for k := range cfg {
				if flags[k].pending {
					delete(cfg, k) // the binary would reject it as unknown
				}
			}
			out, err := yaml.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "exporter.yaml")
			if err := os.WriteFile(file, out, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "--config", file, "--once",
				"--source", "file:" + sample, "--sink", "file://" + filepath.Join(dir, "lake"), "--log-format", "json"}
			if f, ok := flags["metrics-addr"]; ok && !f.pending {
				args = append(args, "--metrics-addr", "127.0.0.1:0")
			}
			if hasValidate {
				if code, stdout, stderr := runExporterEnv(t, secretEnv, "validate", "--config", file); code != 0 {
					t.Errorf("exporter validate: exit %d\n%s%s", code, stdout, stderr)
				}
			}
			code, stdout, stderr := runExporter(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "rows written:") {
				t.Errorf("no summary:\n%s", stdout)
			}
		})
	}
}

// dockerfileExec returns the exec-form arguments of the last instr
// (CMD/ENTRYPOINT) of the Dockerfile.
func dockerfileExec(t *testing.T, instr string) []string {
	t.Helper()
	var args []string
	for line := range strings.SplitSeq(string(readFile(t, "Dockerfile")), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), instr+" "); ok {
			args = nil
			if err := yaml.Unmarshal([]byte(rest), &args); err != nil || len(args) == 0 {
				t.Fatalf("Dockerfile %s %s: want the exec (JSON array) form: %v", instr, rest, err)
			}
		}
	}
	if args == nil {
		t.Fatalf("Dockerfile has no %s", instr)
	}
	return args
}

// TestDockerfile: the builder is the Go of go.mod, the build command is the
// one this test builds with, the final image is distroless static nonroot,
// and the default command reads the config where Kubernetes mounts it. The
// binary built that way is static (distroless/static has no libc) and
// runs.
func TestDockerfile(t *testing.T) {
	df := string(readFile(t, "Dockerfile"))
	if !strings.Contains(df, dockerBuild) {
		t.Errorf("Dockerfile does not build with\n  %s", dockerBuild)
	}
	goMod := string(readFile(t, filepath.Join("..", "go.mod")))
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(goMod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	if !regexp.MustCompile(`(?m)^FROM golang:` + regexp.QuoteMeta(m[1]) + `(\.\d+)?(-\S+)? AS build`).MatchString(df) {
		t.Errorf("the builder is not golang:%s (go.mod says go %s)", m[1], m[1])
	}
	if !regexp.MustCompile(`(?m)^FROM gcr\.io/distroless/static-debian12:nonroot\s*$`).MatchString(df) {
		t.Error("the final stage is not gcr.io/distroless/static-debian12:nonroot")
	}
	if !regexp.MustCompile(`(?m)^USER nonroot\s*$`).MatchString(df) {
		t.Error("no USER nonroot")
	}
	for _, mount := range []string{"--mount=type=cache,target=/go/pkg/mod", "--mount=type=cache,target=/root/.cache/go-build"} {
		if !strings.Contains(df, mount) {
			t.Errorf("no %s", mount)
		}
	}
	if got := dockerfileExec(t, "ENTRYPOINT"); !slices.Equal(got, []string{"/exporter"}) {
		t.Errorf("ENTRYPOINT %q", got)
	}
	cmd := dockerfileExec(t, "CMD")
	if !slices.Equal(cmd, []string{"run", "--config", "/etc/exporter/exporter.yaml"}) {
		t.Errorf("CMD %q", cmd)
	}
	dep := one(t, manifests(t), "Deployment")
	var d deploymentSpec
	if err := dep.Spec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if got := configArg(d.Template.Spec.Containers[0].Args); got != configArg(cmd) {
		t.Errorf("the Deployment reads --config %s, the image's CMD %s", got, configArg(cmd))
	}

	// The binary, built as the Dockerfile builds it, runs.
	bin := buildExporter(t)
	for _, args := range [][]string{{"--help"}, {"run", "--help"}} {
		if code, out, errOut := runExporter(t, args...); code != 0 || !strings.Contains(out, "Usage: exporter") {
			t.Errorf("exporter %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if f, err := elf.Open(bin); err == nil {
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary is dynamically linked; distroless/static has no libc (CGO_ENABLED=0 missing?)")
			}
		}
	}
}

// TestSparkExample: read_lake.py is valid Python (when python3 is here) and
// reads with mergeSchema and orders changes as the lake requires.
func TestSparkExample(t *testing.T) {
	src := string(readFile(t, filepath.Join("spark", "read_lake.py")))
	for _, want := range []string{`"mergeSchema", "true"`, `F.col("op_ts").desc(), F.col("src_partition").desc(), F.col("src_offset").desc()`, `"DELETE"`, "absent_columns"} {
		if !strings.Contains(src, want) {
			t.Errorf("read_lake.py does not contain %s", want)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: syntax not checked")
	}
	cmd := exec.Command(py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", filepath.Join("spark", "read_lake.py"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("read_lake.py: %v\n%s", err, out)
	}
}

// sqlStatement is one statement of a SQL file and the name given to it by
// a "-- name: X" comment line before it.
type sqlStatement struct {
	name, sql string
}

// splitSQL splits a SQL file into statements: comment lines are dropped, a
// statement ends with a line that ends with ";".
func splitSQL(src string) []sqlStatement {
	var out []sqlStatement
	var cur []string
	name := ""
	nameRe := regexp.MustCompile(`^--\s*name:\s*(\S+)`)
	for line := range strings.SplitSeq(src, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "--") {
			if m := nameRe.FindStringSubmatch(trim); m != nil {
				name = m[1]
			}
			continue
		}
		if trim == "" && len(cur) == 0 {
			continue
		}
		cur = append(cur, line)
		if strings.HasSuffix(trim, ";") {
			out = append(out, sqlStatement{name, strings.Join(cur, "\n")})
			cur, name = nil, ""
		}
	}
	return out
}

func TestSplitSQL(t *testing.T) {
	got := splitSQL("-- a; b;\nSET x = 1;\n\n-- name: q\nSELECT 1\n  FROM t; \n-- tail;\n")
	want := []sqlStatement{{"", "SET x = 1;"}, {"q", "SELECT 1\n  FROM t; "}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	names := map[string]bool{}
	for _, s := range splitSQL(string(readFile(t, filepath.Join("duckdb", "queries.sql")))) {
		if s.name != "" {
			if names[s.name] {
				t.Errorf("queries.sql: name %q twice", s.name)
			}
			names[s.name] = true
		}
	}
	for _, want := range []string{"orders_current", "customers_current"} {
		if !names[want] {
			t.Errorf("queries.sql has no query named %s", want)
		}
	}
}

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/remstore/remstore/settings"
)

// compose.yaml cannot run in CI (no registry for postgres:15): what can be
// checked of the file itself is checked here; scripts/image-docs.sh has
// podman-compose read it, and builds and runs the image as docs/install.md
// says.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
			Ports []string `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	rs, ok := c.Services["remstore"]
	if !ok {
		t.Fatal("no remstore service")
	}
	script, err := os.ReadFile("../../scripts/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^tag=` + regexp.QuoteMeta(rs.Image) + `$`).Match(script) {
		t.Errorf("compose runs %s, scripts/image.sh does not build that tag", rs.Image)
	}
	known := map[string]bool{}
	for _, v := range settings.Variables() {
		known[v.Name] = true
	}
	for k := range rs.Environment {
		if !known[k] {
			t.Errorf("compose sets %s, which remstore does not read", k)
		}
	}
	if !settings.IsPostgres(rs.Environment[settings.KeyDB]) || rs.Environment[settings.KeyAPIKeys] == "" {
		t.Errorf("remstore service: REMSTORE_DB %q, REMSTORE_API_KEYS %q", rs.Environment[settings.KeyDB], rs.Environment[settings.KeyAPIKeys])
	}
	if rs.DependsOn["postgres"].Condition != "service_healthy" || len(c.Services["postgres"].Healthcheck.Test) == 0 {
		t.Error("remstore does not wait for a healthy postgres")
	}
	for _, p := range rs.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %s is published beyond loopback", p)
		}
	}
}

// The Dockerfile's settings are ones remstore reads, and the image does not
// run as root; scripts/image.sh checks the built image the same way.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(string(b), " ")
	known := map[string]bool{"HOME": true}
	for _, v := range settings.Variables() {
		known[v.Name] = true
	}
	env := regexp.MustCompile(`(?m)^ENV (.*)$`).FindStringSubmatch(text)
	if env == nil {
		t.Fatal("no ENV line")
	}
	for _, kv := range strings.Fields(env[1]) {
		if k, _, _ := strings.Cut(kv, "="); !known[k] {
			t.Errorf("ENV %s: remstore does not read it", k)
		}
	}
	if u := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(text); u == nil || strings.HasPrefix(u[1], "0") || strings.HasPrefix(u[1], "root") {
		t.Errorf("USER: %v", u)
	}
	if !strings.Contains(text, `CMD ["/usr/local/bin/remstore", "health"]`) {
		t.Error("the health check is not remstore health")
	}
}

package aggregation

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const widget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: %s
  namespace: default
spec:
  color: Red
`

// TestAggregatedByKubeAPIServer runs kapi as an APIService of a real
// kube-apiserver: the cluster authenticates and authorizes what it proxies,
// and kapi asks the cluster (TokenReview, SubjectAccessReview, the
// extension-apiserver-authentication ConfigMap) about what comes straight
// to it.
func TestAggregatedByKubeAPIServer(t *testing.T) {
	c := newCluster(t)

	c.check("discovery", func(t *testing.T) {
		out := c.kubectl(c.admin, "api-resources", "--api-group=example.com", "-o", "name")
		for _, want := range []string{"widgets.example.com", "widgetclasses.example.com"} {
			if !strings.Contains(out, want) {
				t.Errorf("api-resources lacks %s:\n%s", want, out)
			}
		}
		code, body, err := c.get(c.cluster, c.url+"/apis/example.com/v1", nil)
		if err != nil || code != 200 || !strings.Contains(body, `"widgets"`) {
			t.Errorf("GET /apis/example.com/v1 through kube-apiserver: %d %v %s", code, err, body)
		}
		// The aggregator merges kapi's OpenAPI: kubectl explains widgets
		// through kube-apiserver.
		c.eventually("kubectl explain widget.spec.color", time.Minute, func() error {
			out, err := c.kubectlErr(c.admin, "explain", "widget.spec.color", "--api-version=example.com/v1")
			if err != nil {
				return err
			}
			if !strings.Contains(out, "Color of the widget") {
				return fmt.Errorf("%s", out)
			}
			return nil
		})
		// 503s come from before kapi had endpoints; anything else is kapi's.
		for _, line := range strings.Split(c.logs["kube-apiserver"].String(), "\n") {
			if strings.Contains(line, "failed to download v1.example.com") && !strings.Contains(line, "ResponseCode: 503") {
				t.Errorf("kube-apiserver could not download kapi's OpenAPI: %s", line)
			}
		}
	})

	c.check("kubectl verbs", func(t *testing.T) {
		c.apply(fmt.Sprintf(widget, "w1"))
		out := c.kubectl(c.admin, "get", "widgets", "-n", "default", "-o", "name")
		if !strings.Contains(out, "widget.example.com/w1") {
			t.Fatalf("get widgets: %s", out)
		}
		c.kubectl(c.admin, "label", "widget", "w1", "-n", "default", "tier=gold")
		c.kubectl(c.admin, "patch", "widget", "w1", "-n", "default", "--type=merge", "-p", `{"spec":{"color":"Blue"}}`)
		out = c.kubectl(c.admin, "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.metadata.labels.tier} {.spec.color}")
		if out != "gold Blue" {
			t.Errorf("after label and patch: %q, want %q", out, "gold Blue")
		}
		out = c.kubectl(c.admin, "get", "widgets", "-n", "default", "-l", "tier=gold", "-o", "name")
		if strings.TrimSpace(out) != "widget.example.com/w1" {
			t.Errorf("get -l tier=gold: %q", out)
		}
		c.kubectl(c.admin, "delete", "widget", "w1", "-n", "default")
		if out, err := c.kubectlErr(c.admin, "get", "widget", "w1", "-n", "default"); err == nil || !strings.Contains(out, "NotFound") {
			t.Errorf("get after delete: %v %s", err, out)
		}
		// NamespaceLifecycle asks the cluster: a namespace it lacks is refused.
		file := filepath.Join(c.dir, "nowhere.yaml")
		writeFile(t, file, []byte(strings.Replace(fmt.Sprintf(widget, "w2"), "namespace: default", "namespace: nowhere", 1)))
		if out, err := c.kubectlErr(c.admin, "create", "-f", file); err == nil || !strings.Contains(out, "nowhere") {
			t.Errorf("create in a namespace the cluster lacks: %v %s", err, out)
		}
	})

	c.check("watch", func(t *testing.T) {
		code, body, err := c.get(c.cluster, c.url+"/apis/example.com/v1/namespaces/default/widgets", nil)
		if err != nil || code != 200 {
			t.Fatalf("list: %d %v %s", code, err, body)
		}
		var list struct {
			Metadata struct{ ResourceVersion string } `json:"metadata"`
		}
		json.Unmarshal([]byte(body), &list)
		resp, err := c.cluster.Get(c.url + "/apis/example.com/v1/namespaces/default/widgets?watch=1&resourceVersion=" + list.Metadata.ResourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("watch: %d", resp.StatusCode)
		}
		c.apply(fmt.Sprintf(widget, "watched"))
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type   string
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "watched" {
			t.Errorf("first watch event: %v %s", err, line)
		}
	})

	// alice may read widgets, by the cluster's RBAC, and nothing more.
	aliceCert, aliceKey := c.ca.issue(t, c.dir, "alice", "alice", nil, nil)
	alice := c.kubeconfig("alice", aliceCert, aliceKey)
	c.apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widgets-viewer
rules:
- apiGroups: ["example.com"]
  resources: ["widgets"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: alice-views-widgets
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: widgets-viewer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
`)

	c.check("RBAC denial by the cluster", func(t *testing.T) {
		if out, err := c.kubectlErr(alice, "get", "widgets", "-n", "default", "-o", "name"); err != nil || !strings.Contains(out, "watched") {
			t.Errorf("alice get widgets: %v %s", err, out)
		}
		file := filepath.Join(c.dir, "alice-widget.yaml")
		writeFile(t, file, []byte(fmt.Sprintf(widget, "by-alice")))
		out, err := c.kubectlErr(alice, "create", "-f", file)
		if err == nil || !strings.Contains(out, `User "alice" cannot create resource "widgets" in API group "example.com"`) {
			t.Errorf("alice create widget: %v %s", err, out)
		}
		if out, err := c.kubectlErr(c.admin, "get", "widget", "by-alice", "-n", "default"); err == nil {
			t.Errorf("the refused create was stored: %s", out)
		}
	})

	c.check("kubectl 1.33 through the cluster: --as and auth can-i", func(t *testing.T) {
		const kubectl133 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
		if _, err := os.Stat(kubectl133); err != nil {
			t.Skip("no pinned kubectl 1.33")
		}
		run := func(args ...string) (string, error) {
			cmd := exec.Command(kubectl133, append([]string{"--kubeconfig", c.admin, "--cache-dir", filepath.Join(c.dir, "cache133")}, args...)...)
			cmd.Env = append(os.Environ(), "HOME="+c.home)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		// kube-apiserver impersonates alice and proxies her as X-Remote-User.
		if out, err := run("--as=alice", "get", "widgets", "-n", "default", "-o", "name"); err != nil || !strings.Contains(out, "widget.example.com/watched") {
			t.Errorf("--as=alice get widgets: %v %s", err, out)
		}
		if out, err := run("--as=alice", "delete", "widget", "watched", "-n", "default"); err == nil || !strings.Contains(out, `User "alice" cannot delete resource "widgets"`) {
			t.Errorf("--as=alice delete widget: %v %s", err, out)
		}
		for as, want := range map[string]string{"admin": "yes", "alice": "no"} {
			args := []string{"auth", "can-i", "create", "widgets.example.com", "-n", "default"}
			if as != "admin" {
				args = append(args, "--as="+as)
			}
			out, _ := run(args...)
			if strings.TrimSpace(out) != want {
				t.Errorf("%s: auth can-i create widgets: %q, want %q", as, out, want)
			}
		}
	})

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.ca.pem)
	direct := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
	}
	widgetsURL := c.extURL + "/apis/example.com/v1/namespaces/default/widgets"

	c.check("service-account token straight to kapi", func(t *testing.T) {
		c.kubectl(c.admin, "create", "serviceaccount", "reader", "-n", "default")
		token := strings.TrimSpace(c.kubectl(c.admin, "create", "token", "reader", "-n", "default"))
		bearer := http.Header{"Authorization": {"Bearer " + token}}
		code, body, err := c.get(direct(), widgetsURL, bearer)
		if err != nil || code != http.StatusForbidden || !strings.Contains(body, "system:serviceaccount:default:reader") {
			t.Errorf("reader without a binding: %d %v %s", code, err, body)
		}
		code, body, err = c.get(direct(), widgetsURL, http.Header{"Authorization": {"Bearer " + token[:len(token)-4] + "AAAA"}})
		if err != nil || code != http.StatusUnauthorized {
			t.Errorf("a forged token: %d %v %s", code, err, body)
		}
		c.kubectl(c.admin, "create", "rolebinding", "reader-views-widgets", "-n", "default", "--clusterrole=widgets-viewer", "--serviceaccount=default:reader")
		c.eventually("reader allowed once bound (the denial cache expires)", time.Minute, func() error {
			code, body, err := c.get(direct(), widgetsURL, bearer)
			if err != nil {
				return err
			}
			if code != 200 || !strings.Contains(body, "watched") {
				return fmt.Errorf("%d %s", code, body)
			}
			return nil
		})
		req, _ := http.NewRequest(http.MethodDelete, widgetsURL+"/watched", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := direct().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("reader deletes: %d, want 403", resp.StatusCode)
		}
	})

	c.check("front-proxy CA certificate is no user", func(t *testing.T) {
		certFile, keyFile := c.front.issue(t, c.dir, "intruder", "intruder", []string{"system:masters"}, nil)
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		code, body, err := c.get(direct(pair), widgetsURL, nil)
		if err != nil || code != http.StatusUnauthorized {
			t.Errorf("front-proxy CA certificate CN=intruder: %d %v %s", code, err, body)
		}
		// The same CA's front-proxy-client with headers is the front proxy.
		proxy, err := tls.LoadX509KeyPair(filepath.Join(c.dir, "front-proxy-client.crt"), filepath.Join(c.dir, "front-proxy-client.key"))
		if err != nil {
			t.Fatal(err)
		}
		code, body, err = c.get(direct(proxy), widgetsURL, http.Header{"X-Remote-User": {"alice"}})
		if err != nil || code != 200 {
			t.Errorf("front proxy for alice: %d %v %s", code, err, body)
		}
	})

	c.check("ConfigMap reloaded after a CA change", func(t *testing.T) {
		newCA := newCA(t, c.dir, "second-client-ca")
		certFile, keyFile := newCA.issue(t, c.dir, "carol", "carol", nil, nil)
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		code, body, err := c.get(direct(pair), widgetsURL, nil)
		if err != nil || code != http.StatusUnauthorized {
			t.Fatalf("carol before her CA is trusted: %d %v %s", code, err, body)
		}
		out := c.kubectl(c.admin, "get", "configmap", "extension-apiserver-authentication", "-n", "kube-system", "-o", "json")
		var cm map[string]any
		if err := json.Unmarshal([]byte(out), &cm); err != nil {
			t.Fatal(err)
		}
		data := cm["data"].(map[string]any)
		data["client-ca-file"] = data["client-ca-file"].(string) + string(newCA.pem)
		edited, _ := json.Marshal(cm)
		file := filepath.Join(c.dir, "auth-cm.json")
		writeFile(t, file, edited)
		c.kubectl(c.admin, "replace", "-f", file)
		// Authenticated now: the cluster's RBAC refuses carol, by name.
		c.eventually("carol authenticated after the reload", time.Minute, func() error {
			code, body, err := c.get(direct(pair), widgetsURL, nil)
			if err != nil {
				return err
			}
			if code != http.StatusForbidden || !strings.Contains(body, `User \"carol\" cannot list`) {
				return fmt.Errorf("%d %s", code, body)
			}
			return nil
		})
	})

	if os.Getenv("KAPI_AGGREGATION_LOGS") != "" {
		t.Log(c.kubectl(c.admin, "get", "apiservice", "v1.example.com", "-o", "yaml"))
	}
}

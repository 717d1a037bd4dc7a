package aggregation

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cluster is a kube-apiserver on etcd, with the kapi extension server in a
// network namespace of its own behind a veth pair.
type cluster struct {
	t       *testing.T
	dir     string
	bin     string
	ca      *ca // the cluster's CA: serving and client certificates
	front   *ca // the front proxy's CA
	hostIP  string
	extIP   string
	netns   string
	url     string // kube-apiserver
	extURL  string // the extension server, reached directly
	admin   string // kubeconfig of a system:masters user
	home    string
	logs    map[string]*bytes.Buffer
	cluster *http.Client // trusts the cluster CA
}

// binDir is where build-kube-apiserver.sh puts kube-apiserver and etcd.
func binDir() string {
	if d := os.Getenv("KAPI_KUBE_BIN"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kapi-aggregation", "bin")
}

// requireCluster skips unless the test was asked for and can run.
func requireCluster(t *testing.T) string {
	if os.Getenv("KAPI_AGGREGATION") == "" {
		t.Skip("opt-in: builds and runs a real kube-apiserver; run internal/test/aggregation/run.sh (or set KAPI_AGGREGATION=1 with kube-apiserver and etcd in $KAPI_KUBE_BIN)")
	}
	bin := binDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Skipf("%s not built in %s: run internal/test/aggregation/build-kube-apiserver.sh", b, bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the extension server runs in a network namespace the test makes (ip netns add)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip for the network namespace")
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("needs kubectl")
	}
	return bin
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (c *cluster) must(name string, args ...string) {
	c.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// start starts a long-running process whose output is kept for failures.
func (c *cluster) start(name string, env []string, bin string, args ...string) {
	c.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	buf := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = buf, buf
	c.logs[name] = buf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if c.t.Failed() || os.Getenv("KAPI_AGGREGATION_LOGS") != "" {
			out := buf.String()
			if len(out) > 20000 {
				out = out[len(out)-20000:]
			}
			c.t.Logf("--- %s log (tail) ---\n%s", name, out)
		}
	})
}

func newCluster(t *testing.T) *cluster {
	bin := requireCluster(t)
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, bin: bin, logs: map[string]*bytes.Buffer{}, home: filepath.Join(dir, "home")}
	os.MkdirAll(c.home, 0o700)
	c.ca = newCA(t, dir, "cluster-ca")
	c.front = newCA(t, dir, "front-proxy-ca")

	// The network namespace: 10.251.N.0/30, host side .1, extension .2.
	n := os.Getpid()%250 + 1
	c.hostIP, c.extIP = fmt.Sprintf("10.251.%d.1", n), fmt.Sprintf("10.251.%d.2", n)
	c.netns = fmt.Sprintf("kapi-agg-%d", os.Getpid())
	hostIf, nsIf := fmt.Sprintf("kah%d", os.Getpid()), fmt.Sprintf("kan%d", os.Getpid())
	c.must("ip", "netns", "add", c.netns)
	t.Cleanup(func() {
		exec.Command("ip", "link", "del", hostIf).Run()
		exec.Command("ip", "netns", "del", c.netns).Run()
	})
	c.must("ip", "link", "add", hostIf, "type", "veth", "peer", "name", nsIf)
	c.must("ip", "link", "set", nsIf, "netns", c.netns)
	c.must("ip", "addr", "add", c.hostIP+"/30", "dev", hostIf)
	c.must("ip", "link", "set", hostIf, "up")
	c.must("ip", "-n", c.netns, "addr", "add", c.extIP+"/30", "dev", nsIf)
	c.must("ip", "-n", c.netns, "link", "set", nsIf, "up")
	c.must("ip", "-n", c.netns, "link", "set", "lo", "up")

	// etcd on loopback.
	etcdPort, peerPort := freePort(t), freePort(t)
	etcdURL, peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort), fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	c.start("etcd", nil, filepath.Join(bin, "etcd"), "--data-dir", filepath.Join(dir, "etcd"), "--name", "default",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL, "--log-level", "warn")

	// kube-apiserver on the host side of the veth pair (not loopback, so
	// its own endpoint is valid, and not the machine's external address).
	port := freePort(t)
	c.url = fmt.Sprintf("https://%s:%d", c.hostIP, port)
	servingCert, servingKey := c.ca.issue(t, dir, "apiserver", "kube-apiserver", nil,
		[]net.IP{net.ParseIP(c.hostIP), net.ParseIP("10.96.0.1")}, "kubernetes", "kubernetes.default.svc")
	proxyCert, proxyKey := c.front.issue(t, dir, "front-proxy-client", "front-proxy-client", nil, nil)
	saPub, saKey := serviceAccountKey(t, dir)
	c.start("kube-apiserver", nil, filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", c.hostIP, "--advertise-address", c.hostIP, "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", servingCert, "--tls-private-key-file", servingKey,
		"--client-ca-file", c.ca.file,
		"--requestheader-client-ca-file", c.front.file, "--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", proxyCert, "--proxy-client-key-file", proxyKey,
		"--service-account-key-file", saPub, "--service-account-signing-key-file", saKey,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--authorization-mode", "RBAC", "--enable-aggregator-routing=true",
		"--service-cluster-ip-range", "10.96.0.0/16", "--cert-dir", filepath.Join(dir, "certs"),
		"--profiling=false", "--v=1")

	adminCert, adminKey := c.ca.issue(t, dir, "admin", "admin", []string{"system:masters"}, nil)
	c.admin = c.kubeconfig("admin", adminCert, adminKey)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.ca.pem)
	pair, err := tls.LoadX509KeyPair(adminCert, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	c.cluster = &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
	c.eventually("kube-apiserver ready", 2*time.Minute, func() error {
		code, body, err := c.get(c.cluster, c.url+"/readyz", nil)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	c.startExtension()
	return c
}

// startExtension installs examples/aggregated's manifests, gives the
// server its service account's token and runs it in the namespace.
func (c *cluster) startExtension() {
	t := c.t
	c.kubectl(c.admin, "apply", "-f", filepath.Join("..", "..", "..", "examples", "aggregated", "deploy.yaml"))
	token := c.kubectl(c.admin, "create", "token", "kapi-widgets", "-n", "kapi-system", "--duration", "1h")
	tokenFile := filepath.Join(c.dir, "kapi-widgets.token")
	writeFile(t, tokenFile, []byte(strings.TrimSpace(token)))
	certFile, keyFile := c.ca.issue(t, c.dir, "kapi-serving", "kapi-widgets.kapi-system.svc", nil,
		[]net.IP{net.ParseIP(c.extIP)}, "kapi-widgets.kapi-system.svc")
	c.extURL = "https://" + c.extIP + ":8443"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.start("kapi", []string{serveEnv + "=1", "KAPI_TOKEN_FILE=" + tokenFile, "KAPI_CLUSTER_CA=" + c.ca.file,
		"KAPI_CLUSTER=" + c.url, "KAPI_TLS_CERT=" + certFile, "KAPI_TLS_KEY=" + keyFile, "KAPI_ADDR=" + c.extIP + ":8443"},
		"ip", "netns", "exec", c.netns, self, "-test.run=^$")
	// No controller manager runs: the Service's endpoints are written here,
	// as the EndpointSlice controller would.
	c.apply(fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kapi-widgets-1
  namespace: kapi-system
  labels: {kubernetes.io/service-name: kapi-widgets}
addressType: IPv4
endpoints:
- addresses: [%q]
  conditions: {ready: true}
ports:
- port: 8443
  protocol: TCP
  name: ""
---
apiVersion: v1
kind: Endpoints
metadata:
  name: kapi-widgets
  namespace: kapi-system
subsets:
- addresses: [{ip: %q}]
  ports: [{port: 8443, protocol: TCP}]
`, c.extIP, c.extIP))
	c.eventually("APIService v1.example.com available", 2*time.Minute, func() error {
		out, err := c.kubectlErr(c.admin, "get", "apiservice", "v1.example.com", "-o", `jsonpath={.status.conditions[?(@.type=="Available")]}`)
		if err != nil {
			return err
		}
		if !strings.Contains(out, `"status":"True"`) {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
}

// check runs f as subtest name, with c's helpers failing that subtest.
func (c *cluster) check(name string, f func(t *testing.T)) {
	parent := c.t
	parent.Run(name, func(t *testing.T) {
		c.t = t
		defer func() { c.t = parent }()
		f(t)
	})
}

func (c *cluster) kubeconfig(name, cert, key string) string {
	file := filepath.Join(c.dir, name+".kubeconfig")
	writeFile(c.t, file, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, certificate-authority: %q}
users:
- name: %s
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: test
  context: {cluster: test, user: %s}
current-context: test
`, c.url, c.ca.file, name, cert, key, name)))
	return file
}

func (c *cluster) kubectlErr(kubeconfig string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(c.home, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+c.home)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String() + errOut.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

func (c *cluster) kubectl(kubeconfig string, args ...string) string {
	c.t.Helper()
	out, err := c.kubectlErr(kubeconfig, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (c *cluster) apply(manifest string) {
	c.t.Helper()
	file := filepath.Join(c.dir, fmt.Sprintf("manifest-%d.yaml", time.Now().UnixNano()))
	writeFile(c.t, file, []byte(manifest))
	c.kubectl(c.admin, "apply", "-f", file)
}

func (c *cluster) get(client *http.Client, url string, header http.Header) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// eventually retries f until it succeeds or the time is up: the state
// waited for is the cluster's (readiness, reloads, cache expiry), never a
// measured speed.
func (c *cluster) eventually(what string, limit time.Duration, f func() error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("%s: still %v after %v", what, err, limit)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Command secured mounts kapi inside an existing service — its own mux,
// its own /hello route, its own request logger — and lets in only whom
// its token file names, with rules shaped like Kubernetes RBAC:
//
//	go run ./examples/secured -tokens tokens.csv -namespace team-a
//	kubectl --server https://127.0.0.1:8443 --insecure-skip-tls-verify --token ADMIN-TOKEN get widgets -A
//
// It serves HTTPS, because kubectl and client-go send credentials only over
// TLS: with -tls-cert and -tls-key, or else a self-signed certificate it
// makes up (hence --insecure-skip-tls-verify above). With -client-ca,
// client certificates signed by those CAs authenticate too: the subject's
// common name is the user, its organizations the groups. As kube-apiserver,
// the server asks for a client certificate without requiring it and
// verifies it against those CAs in its authenticator, not in the
// handshake: a certificate they did not sign authenticates nobody, and a
// token sent with it is still tried.
//
// The token file is kube-apiserver's (token,user,uid,"group1,group2").
// Members of the group admins may do everything; viewers may get and list
// widgets in the one namespace -namespace names (default "default"), and
// watchers may also watch them there. Every authenticated user may read
// discovery, OpenAPI and /version, as Kubernetes' default RBAC allows, so
// that kubectl works; the health checks need no token. Without -tokens,
// the command makes up an admin and a viewer token and prints them.
//
// # kubectl without a token
//
// Given an https:// server and no credentials at all (no --token, no
// client certificate, no kubeconfig user), kubectl asks
// "Please enter Username:" before it sends a request: client-go's
// clientcmd prompts for a user name and password whenever it talks TLS
// and cannot identify the user (canIdentifyUser in
// k8s.io/client-go/tools/clientcmd), whatever the server would answer; it
// does the same against kube-apiserver. No answer of the server can
// prevent it: pass a token (or a certificate). A request with no
// credentials that reaches the server (curl, or kubectl with
// --username and --password, which kapi does not accept) is answered 401
// Unauthorized, as kube-apiserver answers when anonymous requests are
// off; apiserver.WithAnonymous lets them in as system:anonymous.
package main

// Package fairness shares a server's capacity among its clients, in the
// manner of Kubernetes' API Priority and Fairness, simpler.
//
// # Classification
//
// A request is matched against flow schemas in order; the first that
// matches names its priority level and how its flow is told apart: by user,
// or by user and namespace. Default has kube-apiserver's mandatory and
// suggested schemas that matter to a single server: system:masters and the
// health checks are exempt; the server's own controllers (service accounts
// of kube-system) have a level of their own (workload-high); everyone else
// shares global-default, one flow per user.
//
// # Queuing and dispatch
//
// Each level that is not exempt has a number of seats, requests served at
// once. A request that finds no seat free waits in its flow's queue, which
// is bounded; when a seat frees, it goes to the waiting flow with the fewest
// requests being served, the longest-waiting such flow first, so that a
// client flooding the server holds at most its share of the seats while a
// quieter one is served next. A request whose queue is full, or whose wait
// passes its limit, is rejected with ErrRejected: the server answers 429
// with Retry-After, and the client is refused quickly rather than left to
// time out.
//
// # Identifiers
//
// Every schema and level has a UID, which servers send in the
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID
// headers as kube-apiserver does (client-go names the flow schema when it
// retries a 429).
package fairness

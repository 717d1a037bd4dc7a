// Package apiservertest starts kapi servers for tests, the way net/http/httptest
// starts HTTP servers.
//
// # Use
//
//	srv := apiservertest.New(t, widgetapi.Register)
//	resp, err := srv.Client().Get(srv.URL + "/apis/example.com/v1/namespaces/default/widgets")
//
// The server listens on a free loopback port, stores in memory unless given
// apiserver.WithStorage, and is shut down by t.Cleanup.
package apiservertest

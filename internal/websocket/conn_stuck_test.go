package websocket

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"
)

// A client that reads nothing cannot hold a server's write, nor its Close,
// past EndWrites: the blocked write fails, and Close returns.
func TestEndWritesUnblocksAStuckClient(t *testing.T) {
	server, client := net.Pipe() // unbuffered: a write blocks until the client reads
	defer client.Close()
	c := newConn(context.Background(), server, bufio.NewReader(server), bufio.NewWriter(server), "")
	wrote := make(chan error, 1)
	go func() {
		_ = c.WriteMessage(true, []byte("an event the client never reads"))
		wrote <- c.Flush()
	}()
	select {
	case err := <-wrote:
		t.Fatalf("a write to a client reading nothing returned %v before EndWrites", err)
	case <-time.After(50 * time.Millisecond):
	}
	c.EndWrites()
	if err := <-wrote; err == nil {
		t.Fatal("the blocked write succeeded")
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // a bound on a hang, not a timing
		t.Fatal("Close hangs on a client that reads nothing")
	}
}

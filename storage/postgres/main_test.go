package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/internal/leakcheck"
	"github.com/kapi-dev/kapi/storage/postgres"
)

// The package's tests share one PostgreSQL: the one $KAPI_POSTGRES_URL
// names, or else a throwaway cluster they start themselves (initdb into a
// temporary directory, as the postgres user when run as root, since
// PostgreSQL refuses to run as root; listening on 127.0.0.1 and a Unix
// socket in that directory only) and remove at the end. Each test's stores
// live in a schema of their own. Without PostgreSQL the tests skip, saying
// why, except in CI (CI set), where they fail. No goroutine may outlive
// the tests (leakcheck): a store's Close ends all of its own.

var (
	// baseURL is the connection URL of the tests' database.
	baseURL string
	// skipReason, if not empty, is why there is no database.
	skipReason string
	// testCluster is the throwaway cluster, nil if $KAPI_POSTGRES_URL
	// named one.
	testCluster *cluster
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if url := os.Getenv("KAPI_POSTGRES_URL"); url != "" {
		baseURL = url
		return leakcheck.Main(m)
	}
	c, err := startCluster()
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "starting PostgreSQL for the tests:", err)
			return 1
		}
		skipReason = fmt.Sprintf("no PostgreSQL to test on: %v (install postgresql, or set KAPI_POSTGRES_URL)", err)
		return leakcheck.Main(m)
	}
	defer c.remove()
	testCluster, baseURL = c, c.url()
	return leakcheck.Main(m)
}

// cluster is a throwaway PostgreSQL cluster.
type cluster struct {
	bin  string   // the directory of initdb, pg_ctl
	dir  string   // data/, the server's log and its socket
	port int      // on 127.0.0.1
	as   []string // the command prefix that runs as the server's user
}

// postgresBin finds PostgreSQL's programs: on PATH, or Debian's
// /usr/lib/postgresql/N/bin, the newest first.
func postgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", errors.New("initdb is neither on PATH nor in /usr/lib/postgresql/*/bin")
	}
	slices.SortFunc(found, func(a, b string) int { return versionOf(b) - versionOf(a) })
	return filepath.Dir(found[0]), nil
}

func versionOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func startCluster() (*cluster, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kapi-postgres-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir}
	if err := c.setUp(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *cluster) setUp() error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, and no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return err
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			return err
		}
		c.as = []string{runuser, "-u", "postgres", "--"}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	return c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// run runs one of PostgreSQL's programs as the server's user.
func (c *cluster) run(program string, args ...string) error {
	argv := append(slices.Clone(c.as), filepath.Join(c.bin, program))
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	// In a directory the server's user may enter, whatever the test's is
	// (under root's home, say).
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

func (c *cluster) start() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=300", c.port, c.dir)
	return c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "-o", opts, "start")
}

// stop stops the server: mode "immediate" is a crash, all but a kill -9.
func (c *cluster) stop(mode string) error {
	return c.run("pg_ctl", "-D", c.data(), "-m", mode, "-w", "-t", "60", "stop")
}

// kill sends SIGKILL to the postmaster and waits until it is gone (a
// zombie counts as gone: the machine's init may not reap it).
func (c *cluster) kill() error {
	pidFile, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return fmt.Errorf("postmaster.pid: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the killed postmaster %d still runs after 30s", pid)
		}
	}
	return nil
}

// running says whether process pid exists and is not a zombie.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) state ...": comm may hold spaces, not ")".
	_, rest, _ := strings.Cut(string(stat), ") ")
	return rest != "" && rest[0] != 'Z' && rest[0] != 'X'
}

// startAfterKill starts the server again once the killed postmaster's
// backends, which notice their parent's death by themselves, have let go
// of its shared memory: until then PostgreSQL refuses to start.
func (c *cluster) startAfterKill() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.start()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *cluster) remove() {
	if err := c.stop("fast"); err != nil {
		fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
	}
	os.RemoveAll(c.dir)
}

func (c *cluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// needDatabase skips the test when there is no database.
func needDatabase(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

var schemas atomic.Int64

// freshSchema returns a schema no other test uses, dropped when the test
// ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	needDatabase(t)
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), schemas.Add(1))
	dropAtEnd(t, name)
	return name
}

// dropAtEnd drops the schema when the test ends.
func dropAtEnd(t testing.TB, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, baseURL)
		if err != nil {
			return // the test that stopped the server says so
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	})
}

// mustStore returns a store in schema, closed when the test ends.
func mustStore(t testing.TB, schema string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	needDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, baseURL, append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

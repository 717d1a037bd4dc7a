package pgtest

import (
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
	"syscall"
	"time"
)

// ErrNoPostgres is returned by Start when PostgreSQL's programs cannot be
// found: a caller outside CI may skip, saying so.
var ErrNoPostgres = errors.New("pgtest: no PostgreSQL installed")

// Cluster is a throwaway PostgreSQL cluster: a data directory of its own,
// a server listening on 127.0.0.1 and a Unix socket in that directory.
// Its methods are not safe for concurrent use.
type Cluster struct {
	bin  string   // the directory of initdb, pg_ctl
	dir  string   // data/, the server's log and its socket
	port int      // on 127.0.0.1
	as   []string // the command prefix that runs as the server's user
	opts []string // extra -c settings
}

// Bin finds PostgreSQL's programs: on PATH, or Debian's
// /usr/lib/postgresql/N/bin, the newest first.
func Bin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", fmt.Errorf("%w: initdb is neither on PATH nor in /usr/lib/postgresql/*/bin", ErrNoPostgres)
	}
	slices.SortFunc(found, func(a, b string) int { return versionOf(b) - versionOf(a) })
	return filepath.Dir(found[0]), nil
}

func versionOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// Start creates a cluster in a new temporary directory and starts its
// server. settings are extra server settings ("shared_buffers=256MB"),
// passed as -c options each time the server starts. Remove stops it and
// deletes the directory.
func Start(settings ...string) (*Cluster, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kapi-postgres-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, opts: settings}
	if err := c.setUp(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := c.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) setUp() error {
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

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// Dir is the cluster's directory: data/, server.log and the socket.
func (c *Cluster) Dir() string { return c.dir }

// run runs one of PostgreSQL's programs as the server's user.
func (c *Cluster) run(program string, args ...string) error {
	argv := append(slices.Clone(c.as), filepath.Join(c.bin, program))
	argv = append(argv, args...)
	keepInheritedFiles()
	cmd := exec.Command(argv[0], argv[1:]...)
	// In a directory the server's user may enter, whatever the caller's
	// is (under root's home, say).
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

// keepInheritedFiles marks the descriptors this process inherited open
// (above stderr) close-on-exec, so that the server does not hold them: a
// test run under flock(1) passes its lock down, and a server a killed test
// left running would otherwise keep that lock taken until someone stops it.
// Go opens its own descriptors close-on-exec already.
func keepInheritedFiles() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return // not Linux: nothing to go by
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// Start starts the server of a stopped cluster and waits until it accepts
// connections.
func (c *Cluster) Start() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=300", c.port, c.dir)
	for _, s := range c.opts {
		opts += " -c " + s
	}
	return c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "-o", opts, "start")
}

// Stop stops the server: mode "immediate" is a crash, all but a kill -9;
// "fast" a clean stop.
func (c *Cluster) Stop(mode string) error {
	return c.run("pg_ctl", "-D", c.data(), "-m", mode, "-w", "-t", "60", "stop")
}

// PID is the postmaster's process id, from postmaster.pid.
func (c *Cluster) PID() (int, error) {
	pidFile, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %w", err)
	}
	return pid, nil
}

// Kill sends SIGKILL to the postmaster and waits until it is gone (a
// zombie counts as gone: the machine's init may not reap it).
func (c *Cluster) Kill() error {
	pid, err := c.PID()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); Running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the killed postmaster %d still runs after 30s", pid)
		}
	}
	return nil
}

// Running says whether process pid exists and is not a zombie.
func Running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) state ...": comm may hold spaces, not ")".
	_, rest, _ := strings.Cut(string(stat), ") ")
	return rest != "" && rest[0] != 'Z' && rest[0] != 'X'
}

// StartAfterKill starts the server again once the killed postmaster's
// backends, which notice their parent's death by themselves, have let go
// of its shared memory: until then PostgreSQL refuses to start.
func (c *Cluster) StartAfterKill() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Start()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Remove stops the server and deletes the cluster's directory.
func (c *Cluster) Remove() error {
	err := c.Stop("fast")
	if rmErr := os.RemoveAll(c.dir); err == nil {
		err = rmErr
	}
	return err
}

// URL is the connection URL of the cluster's postgres database, as the
// postgres superuser over TCP.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

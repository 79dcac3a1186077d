// Package cluster starts and stops a real BookKeeper cluster on loopback:
// ZooKeeper and each bookie in its own JVM, from a released BookKeeper's
// artifacts, so that a crash is kill -9 of one process (no shutdown hook,
// nothing flushed) and a restart reuses the same journal, ledger directory
// and cookie. Every process it starts is in its own process group, dies
// with this one (Pdeathsig), and is killed and reaped by Close on every
// exit path.
package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bkcheck/bkcheck/bridge/powerloss"
)

// Options say what cluster to start.
type Options struct {
	Classpath string // the bridge's classes and BookKeeper's jars
	Bookies   int
	Dir       string // scratch directory: data and logs of every process
	// Settings are bookie configuration keys (ServerConfiguration's names)
	// over the defaults of BookieConf.
	Settings map[string]string
	// StartTimeout bounds the wait for a process to serve; it is a bound on
	// failure, not a pause: starting waits for the port, not for the clock.
	StartTimeout time.Duration
	// Agent, if not empty, is the bkcheck agent's jar (bridge.AgentJar),
	// loaded into every bookie's JVM with a control port of its own
	// (Checkpoint); Fixes are the candidate fixes it weaves, by the
	// agent's names. A bookie whose weave does not take exits at its start.
	Agent string
	Fixes []string
	// HoldPreBootCheck has the agent hold the data-integrity check a
	// bookie starts after an unclean shutdown until PreBootCheck runs it.
	HoldPreBootCheck bool
	// HoldJournal has the agent able to keep a bookie's journal records
	// back (Journal).
	HoldJournal bool
	// RaceAdds has the agent able to interleave an add and a fence inside
	// a bookie (Race).
	RaceAdds bool
	// HoldAutoRecovery has the agent in the client driver hold the
	// Auditor's and the ReplicationWorker's steps at gates until the
	// harness opens them (the driver's gate verb).
	HoldAutoRecovery bool
	// PowerLoss mounts each bookie's journal and ledger directories on a
	// file system that can lose power (package powerloss): PowerLoss and
	// SyncDisks act on it. Start fails where FUSE cannot mount.
	PowerLoss bool
}

// Cluster is a running ZooKeeper and its bookies.
type Cluster struct {
	opts    Options
	ZKPort  int
	bookies []*Bookie
	zk      *proc
	ports   *reservation
	mu      sync.Mutex
	procs   map[*proc]bool
}

// Bookie is one bookie: its name in the model (b1, ...), its port, which is
// also its BookieId (127.0.0.1:port), and its process while it runs.
type Bookie struct {
	Name string
	Port int
	HTTP int // the admin HTTP server's port (httpServerPort)
	// Control is the agent's control port (0 without the agent).
	Control int
	dir     string
	conf    string
	p       *proc
	// disks are the journal's and the ledgers' file systems (PowerLoss),
	// in diskDirs' order.
	disks []*powerloss.FS
}

// diskDirs are a bookie's directories under its own (BookieConf's).
var diskDirs = []string{"journal", "ledgers"}

// ID is the bookie's BookieId as BookKeeper names it.
func (b *Bookie) ID() string { return "127.0.0.1:" + strconv.Itoa(b.Port) }

type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// ErrNoJava is returned when java is not on PATH.
var ErrNoJava = errors.New("java not found on PATH: the bridge runs BookKeeper's bookies and clients on a JDK (17 or later)")

// Start starts ZooKeeper and the bookies and waits until each serves.
// On error everything it started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, ErrNoJava
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 90 * time.Second
	}
	c := &Cluster{opts: opts, procs: map[*proc]bool{}}
	if err := os.MkdirAll(c.tmpDir(), 0o755); err != nil {
		return nil, err
	}
	if opts.PowerLoss {
		// A bkcheck killed with SIGKILL leaves its mounts behind,
		// disconnected: the next run that mounts takes them away.
		if swept := powerloss.Sweep(); len(swept) > 0 {
			fmt.Fprintf(os.Stderr, "bkcheck: unmounted %d power-loss file systems a killed bkcheck left behind: %s\n", len(swept), strings.Join(swept, ", "))
		}
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	perBookie := 2
	if opts.Agent != "" {
		perBookie = 3
	}
	ports, err := reservePorts(1 + perBookie*opts.Bookies)
	if err != nil {
		return nil, err
	}
	c.ports = ports
	c.ZKPort = ports.ports[0]
	zkDir := filepath.Join(opts.Dir, "zk")
	if err := os.MkdirAll(zkDir, 0o755); err != nil {
		return nil, err
	}
	// No session ends by a clock within a run: maxSessionTimeout lets
	// the bookies ask for an hour (their zkTimeout), so a stopped bookie's
	// registration lasts until the harness ends it (Unregister).
	zkConf := filepath.Join(opts.Dir, "zoo.cfg")
	if err := os.WriteFile(zkConf, []byte(fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nmaxSessionTimeout=%d\n",
		zkDir, c.ZKPort, sessionMillis)), 0o644); err != nil {
		return nil, err
	}
	c.zk, err = c.spawn(ctx, "zookeeper", filepath.Join(opts.Dir, "zk.log"),
		[]string{"-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=ruok"},
		"org.apache.zookeeper.server.ZooKeeperServerMain", zkConf)
	if err != nil {
		return nil, err
	}
	if err := c.waitPort(ctx, c.zk, c.ZKPort); err != nil {
		return nil, err
	}
	if err := c.waitZK(ctx); err != nil {
		return nil, err
	}
	for i := 0; i < opts.Bookies; i++ {
		at := 1 + perBookie*i
		b := &Bookie{Name: fmt.Sprintf("b%d", i+1), Port: ports.ports[at], HTTP: ports.ports[at+1], dir: filepath.Join(opts.Dir, fmt.Sprintf("b%d", i+1))}
		if opts.Agent != "" {
			b.Control = ports.ports[at+2]
		}
		b.conf = filepath.Join(b.dir, "bk_server.conf")
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(b.conf, []byte(BookieConf(b.Port, b.HTTP, b.dir, c.MetadataURI(), opts.Settings)), 0o644); err != nil {
			return nil, err
		}
		c.bookies = append(c.bookies, b)
		if opts.PowerLoss {
			if err := c.mountDisks(b); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// ledgersRoot is the metadata's root znode (zkLedgersRootPath).
const ledgersRoot = "/ledgers"

// sessionMillis is the longest ZooKeeper session the server grants and
// the bookies' zkTimeout: longer than any run.
const sessionMillis = 3600000

// MetadataURI is the metadataServiceUri of the cluster.
func (c *Cluster) MetadataURI() string {
	return fmt.Sprintf("zk+hierarchical://127.0.0.1:%d%s", c.ZKPort, ledgersRoot)
}

// Bookies are the cluster's bookies, b1 first.
func (c *Cluster) Bookies() []*Bookie { return c.bookies }

// Bookie returns the bookie the model names name, or nil.
func (c *Cluster) Bookie(name string) *Bookie {
	for _, b := range c.bookies {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// StartBookies starts every bookie that is not running, all at once, and
// waits until each serves. The metadata store must be formatted first.
func (c *Cluster) StartBookies(ctx context.Context) error {
	var errs []error
	for _, b := range c.bookies {
		if b.p == nil {
			if err := c.launch(ctx, b); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, b := range c.bookies {
		if b.p != nil {
			if err := c.waitPort(ctx, b.p, b.Port); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// What the bookies wrote as they started (the cookie, the directories'
	// first files) is durable before the run's first step, as on machines
	// that ran long enough for the operating system's write-back: the
	// model's bookies start with their disks in order. (Cookie.writeToFile
	// does not fsync: a power loss just after a bookie's first start
	// leaves its cookie empty, and the bookie refuses to start.)
	for _, b := range c.bookies {
		for _, d := range b.disks {
			d.Sync()
		}
	}
	return errors.Join(errs...)
}

func (c *Cluster) launch(ctx context.Context, b *Bookie) error {
	jvm := append([]string{"-Xmx192m", "-XX:MaxDirectMemorySize=192m"}, c.AgentFlags(b.Control)...)
	p, err := c.spawn(ctx, "bookie "+b.Name, filepath.Join(b.dir, "bookie.log"), jvm,
		"org.apache.bookkeeper.server.Main", "--conf", b.conf)
	if err != nil {
		return err
	}
	b.p = p
	return nil
}

// AgentFlags are the JVM flags that load the cluster's agent, with its
// control port (0: none, as in the client driver, whose classes a
// client-side fix changes); none without an agent.
func (c *Cluster) AgentFlags(control int) []string {
	if c.opts.Agent == "" {
		return nil
	}
	args := fmt.Sprintf("control=%d;fixes=%s", control, strings.Join(c.opts.Fixes, "+"))
	if c.opts.HoldPreBootCheck && control != 0 {
		args += ";preboot=hold"
	}
	if c.opts.HoldJournal && control != 0 {
		args += ";journal=hold"
	}
	if c.opts.RaceAdds && control != 0 {
		args += ";race=add"
	}
	if c.opts.HoldAutoRecovery && control == 0 {
		args += ";autorecovery=hold"
	}
	return []string{"-javaagent:" + c.opts.Agent + "=" + args}
}

// Checkpoint has the bookie's SyncThread checkpoint its ledger storage now,
// through the agent's control port, and waits for the checkpoint's end:
// with flush, one with a non-empty write cache (the agent adds an entry
// of a ledger of its own if this ledger has none waiting), which flushes
// the entries and the ledger index; without, one with an empty write
// cache, which flushes nothing (the agent refuses it if the cache holds
// entries). Either way the journal's mark moves (SyncThread.checkpoint).
func (c *Cluster) Checkpoint(ctx context.Context, b *Bookie, flush bool) error {
	cmd := "checkpoint"
	if !flush {
		cmd = "checkpoint idle"
	}
	return c.control(ctx, b, cmd)
}

// ShortRead has the bookie's next read of the entry (BookKeeper's ledger
// and entry ids) from its entry log come back short, as a corrupt log's
// would, after a checkpoint has moved the entry there from the write
// cache: the release's entry logger then decides the answer (NoSuchEntry
// before PR #2909, EIO from it on).
func (c *Cluster) ShortRead(ctx context.Context, b *Bookie, ledger, entry int64) error {
	return c.control(ctx, b, fmt.Sprintf("short-read %d %d", ledger, entry))
}

// PreBootCheck has the bookie run the data-integrity check its start
// began and the agent held (Options.HoldPreBootCheck), and awaits its end:
// each open ledger whose last ensemble holds the bookie fenced and in
// limbo.
func (c *Cluster) PreBootCheck(ctx context.Context, b *Bookie) error {
	return c.control(ctx, b, "preboot")
}

// Journal has the bookie's agent keep back every record given to its
// journal from now on (hold), or hand the records kept back to the
// journal in order and await each one's write (and fsync, with
// journalSyncData) (release). A crash loses what is held.
func (c *Cluster) Journal(ctx context.Context, b *Bookie, hold bool) error {
	if hold {
		return c.control(ctx, b, "journal hold")
	}
	return c.control(ctx, b, "journal release")
}

// Race drives the bookie's agent through an add and a fence interleaved
// on the bookie's own threads (the agent's AddRace): "arm L" (the next add
// of ledger L stops after creating its handle), "await-created",
// "interleave" (after a fencing request's delivery: the fence stores its
// handle, the add checks, the fence goes on; an error if the fence waits
// for the add's lock), "store" (the add stores). Each is awaited.
func (c *Cluster) Race(ctx context.Context, b *Bookie, cmd string) error {
	return c.control(ctx, b, "race "+cmd)
}

// control sends one command to the bookie's agent and awaits its answer.
func (c *Cluster) control(ctx context.Context, b *Bookie, cmd string) error {
	if b.Control == 0 {
		return fmt.Errorf("bookie %s runs without the bkcheck agent: no %s on demand", b.Name, cmd)
	}
	if b.p == nil {
		return fmt.Errorf("bookie %s is not running", b.Name)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", b.Control))
	if err != nil {
		return fmt.Errorf("the agent of bookie %s: %w", b.Name, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := fmt.Fprintln(conn, cmd); err != nil {
		return fmt.Errorf("the agent of bookie %s: %w", b.Name, err)
	}
	answer, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the agent of bookie %s, asked %q: %w; %v", b.Name, cmd, err, c.Alive(b))
	}
	answer = strings.TrimSpace(answer)
	if answer != "ok" {
		return fmt.Errorf("the agent of bookie %s, asked %q: %s", b.Name, cmd, strings.TrimPrefix(answer, "error "))
	}
	return nil
}

// Log is the bookie's log file.
func (b *Bookie) Log() string { return filepath.Join(b.dir, "bookie.log") }

// Alive fails, with the end of its log, when the bookie's process has
// exited on its own.
func (c *Cluster) Alive(b *Bookie) error {
	if b.p == nil {
		return fmt.Errorf("bookie %s is not running", b.Name)
	}
	select {
	case <-b.p.done:
		return fmt.Errorf("bookie %s exited (%v); its log %s ends:\n%s", b.Name, b.p.err, b.p.log, tail(b.p.log, 12))
	default:
		return nil
	}
}

// Crash kills the bookie's process with SIGKILL: no shutdown hook runs and
// nothing is flushed that the bookie had not already written.
func (c *Cluster) Crash(b *Bookie) error {
	if b.p == nil {
		return fmt.Errorf("bookie %s is not running", b.Name)
	}
	c.stop(b.p)
	b.p = nil
	return nil
}

// Unregister ends the registration of a stopped bookie, as its ZooKeeper
// session's expiry does: its znodes under the ledgers' available/ (as
// writable) and available/readonly/ are deleted, and every watcher of the
// bookies' list is told. It says whether the bookie was still registered.
// (No session expires by itself within a run: the bookies' zkTimeout is
// an hour, so when a stopped bookie's registration ends is a step the
// harness takes, the model's BookieRegistrationExpires, never a clock's.)
func (c *Cluster) Unregister(ctx context.Context, b *Bookie) (bool, error) {
	if b.p != nil {
		return false, fmt.Errorf("bookie %s is running: its registration is its own", b.Name)
	}
	z, err := dialZK(ctx, "127.0.0.1:"+strconv.Itoa(c.ZKPort))
	if err != nil {
		return false, err
	}
	defer z.close()
	was := false
	for _, path := range []string{ledgersRoot + "/available/" + b.ID(), ledgersRoot + "/available/readonly/" + b.ID()} {
		deleted, err := z.delete(path)
		if err != nil {
			return was, err
		}
		was = was || deleted
	}
	return was, nil
}

// Restart starts a crashed bookie again on the same directories and
// configuration, and waits until it serves: BookieServer opens its port
// only after the journal has been replayed. A registration of the stopped
// bookie that lasts is ended first, as a restarted bookie's
// registerBookie would otherwise wait for its old session to expire.
func (c *Cluster) Restart(ctx context.Context, b *Bookie) error {
	if b.p != nil {
		return fmt.Errorf("bookie %s is running", b.Name)
	}
	if _, err := c.Unregister(ctx, b); err != nil {
		return err
	}
	if err := c.launch(ctx, b); err != nil {
		return err
	}
	return c.waitPort(ctx, b.p, b.Port)
}

// LoseDisk wipes a bookie's disk: the bookie is killed (if it runs), its
// journal and ledger directories are emptied, and it is started again on
// them. Cookie validation then refuses it (the metadata store holds a
// cookie its directories lack: InvalidCookieException), and LoseDisk waits
// for that exit and returns its log line; the bookie stays down until
// re-formatted.
func (c *Cluster) LoseDisk(ctx context.Context, b *Bookie) (string, error) {
	if b.p != nil {
		c.stop(b.p)
		b.p = nil
	}
	for _, d := range diskDirs {
		if err := c.wipe(b, d); err != nil {
			return "", err
		}
	}
	if err := c.launch(ctx, b); err != nil {
		return "", err
	}
	p := b.p
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	select {
	case <-p.done:
	case <-ctx.Done():
		return "", fmt.Errorf("bookie %s, its disk wiped, did not exit within %v: cookie validation should refuse it; its log %s ends:\n%s", b.Name, c.opts.StartTimeout, p.log, tail(p.log, 12))
	}
	c.mu.Lock()
	delete(c.procs, p)
	c.mu.Unlock()
	b.p = nil
	for _, l := range strings.Split(tail(p.log, 60), "\n") {
		if strings.Contains(l, "Cookie") || strings.Contains(l, "cookie") {
			return strings.TrimSpace(l), nil
		}
	}
	return "", fmt.Errorf("bookie %s, its disk wiped, exited (%v) without a cookie error; its log %s ends:\n%s", b.Name, p.err, p.log, tail(p.log, 12))
}

// Reformat re-formats a bookie as an operator does: the bookie is stopped
// (kill -9 if it runs), then BookieShell bookieformat -nonInteractive
// -force empties its journal and ledger directories, with -deleteCookie
// also deleting its cookie from the metadata store; the bookie then starts
// again, empty, under the same address, and Reformat waits until it
// serves.
func (c *Cluster) Reformat(ctx context.Context, b *Bookie, deleteCookie bool) error {
	if b.p != nil {
		c.stop(b.p)
		b.p = nil
	}
	args := []string{"-conf", b.conf, "bookieformat", "-nonInteractive", "-force"}
	if deleteCookie {
		args = append(args, "-deleteCookie")
	}
	p, err := c.spawn(ctx, "bookieformat "+b.Name, filepath.Join(b.dir, "bookieformat.log"), nil,
		"org.apache.bookkeeper.bookie.BookieShell", args...)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		c.stop(p)
		return ctx.Err()
	}
	c.mu.Lock()
	delete(c.procs, p)
	c.mu.Unlock()
	if p.err != nil {
		return fmt.Errorf("bookieformat of %s failed (%v); its log %s ends:\n%s", b.Name, p.err, p.log, tail(p.log, 12))
	}
	return c.Restart(ctx, b)
}

// CollectGarbage runs the bookie's garbage collection now and waits for
// its end, through the bookie's admin HTTP server: PUT /api/v1/bookie/gc
// sets GarbageCollectorThread's forceGarbageCollection flag and wakes the
// thread, which clears the flag when the forced run is done; GET
// /api/v1/bookie/gc reports the flag (TriggerGCService).
func (c *Cluster) CollectGarbage(ctx context.Context, b *Bookie) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/bookie/gc", b.HTTP)
	resp, err := c.adminPut(ctx, b, url, `{"forceMajor": true, "forceMinor": true}`)
	if err != nil {
		return fmt.Errorf("triggering the garbage collection of %s: %w", b.Name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("triggering the garbage collection of %s: %s", b.Name, resp.Status)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("the garbage collection of %s: %w", b.Name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "false") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the garbage collection of %s did not end within %v (last answer %s)", b.Name, c.opts.StartTimeout, body)
		case <-time.After(25 * time.Millisecond): // polling for the flag BookKeeper clears at the end
		}
	}
}

// adminPut sends a PUT to a bookie's admin HTTP server. A restarted
// bookie serves its bookie port (run.serving) before its HTTP server
// listens, so a refused connection is retried while the bookie's process
// lives, until StartTimeout: a readiness wait, not a guess.
func (c *Cluster) adminPut(ctx context.Context, b *Bookie, url, body string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			return resp, err
		}
		if aerr := c.Alive(b); aerr != nil {
			return nil, fmt.Errorf("%w (%v)", err, aerr)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(25 * time.Millisecond): // polling for the HTTP server to listen
		}
	}
}

// ReadOnly turns bookie b read-only (readOnly true) or writable again
// through its admin HTTP server, as an operator does (PUT
// /api/v1/bookie/state/readonly: BookieStateReadOnlyService, which calls
// the StateManager's transitionToReadOnlyMode or transitionToWritableMode
// and answers the state it reached).
func (c *Cluster) ReadOnly(ctx context.Context, b *Bookie, readOnly bool) error {
	what := map[bool]string{true: "read-only", false: "writable"}[readOnly]
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/bookie/state/readonly", b.HTTP)
	resp, err := c.adminPut(ctx, b, url, fmt.Sprintf(`{"readOnly": %v}`, readOnly))
	if err != nil {
		return fmt.Errorf("turning %s %s: %w", b.Name, what, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(strings.ReplaceAll(string(body), " ", ""), fmt.Sprintf(`"readOnly":%v`, readOnly)) {
		return fmt.Errorf("turning %s %s: %s %s", b.Name, what, resp.Status, body)
	}
	return nil
}

// Spawn starts another JVM of the cluster (the client driver), reaped with
// the rest; stdin and stdout are the caller's.
func (c *Cluster) Spawn(ctx context.Context, name, logFile string, jvm []string, main string, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd, p, err := c.command(name, logFile, jvm, main, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := c.run(p); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, nil
}

func (c *Cluster) spawn(ctx context.Context, name, logFile string, jvm []string, main string, args ...string) (*proc, error) {
	_, p, err := c.command(name, logFile, jvm, main, args...)
	if err != nil {
		return nil, err
	}
	return p, c.run(p)
}

func (c *Cluster) command(name, logFile string, jvm []string, main string, args ...string) (*exec.Cmd, *proc, error) {
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) // a restart appends
	if err != nil {
		return nil, nil, err
	}
	full := append([]string{
		"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.net.preferIPv4Stack=true",
		// What BookKeeper's own scripts open on JDK 17 (bin/common.sh); the
		// releases before 4.15 need java.util.zip for their CRC32 digests.
		"--add-opens", "java.base/java.util.zip=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
		"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
		"--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
		"-Dlog4j2.configurationFile=" + filepath.Join(c.opts.Dir, "log4j2.properties"),
		"-Djava.io.tmpdir=" + c.tmpDir(),
		"-cp", c.opts.Classpath,
	}, jvm...)
	full = append(full, main)
	full = append(full, args...)
	cmd := exec.Command("java", full...)
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, &proc{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}, nil
}

func (c *Cluster) run(p *proc) error {
	if err := os.WriteFile(filepath.Join(c.opts.Dir, "log4j2.properties"), []byte(log4j2), 0o644); err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	c.mu.Lock()
	c.procs[p] = true
	c.mu.Unlock()
	go func() {
		p.err = p.cmd.Wait()
		if f, ok := p.cmd.Stderr.(*os.File); ok {
			f.Close()
		}
		close(p.done)
	}()
	return nil
}

// stop kills a process's group and reaps it.
func (c *Cluster) stop(p *proc) {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.done
	c.mu.Lock()
	delete(c.procs, p)
	c.mu.Unlock()
}

// waitPort waits until the process accepts connections on port, or fails
// with the end of its log when it exits first or ctx ends.
func (c *Cluster) waitPort(ctx context.Context, p *proc, port int) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before serving on port %d (%v); its log %s ends:\n%s", p.name, port, p.err, p.log, tail(p.log, 12))
		case <-ctx.Done():
			return fmt.Errorf("%s did not serve on port %d within %v; its log %s ends:\n%s", p.name, port, c.opts.StartTimeout, p.log, tail(p.log, 12))
		case <-time.After(50 * time.Millisecond): // polling a port for an event, not waiting on an outcome
		}
	}
}

// waitZK waits until ZooKeeper answers "imok" to "ruok": its port opens
// before its database is loaded, and a server that failed to load keeps it
// open.
func (c *Cluster) waitZK(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	addr := "127.0.0.1:" + strconv.Itoa(c.ZKPort)
	for {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
			_, _ = conn.Write([]byte("ruok"))
			b, _ := io.ReadAll(conn)
			conn.Close()
			if string(b) == "imok" {
				return nil
			}
		}
		select {
		case <-c.zk.done:
			return fmt.Errorf("zookeeper exited (%v); its log %s ends:\n%s", c.zk.err, c.zk.log, tail(c.zk.log, 12))
		case <-ctx.Done():
			return fmt.Errorf("zookeeper did not answer ruok within %v; its log %s ends:\n%s", c.opts.StartTimeout, c.zk.log, tail(c.zk.log, 12))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close kills and reaps every process the cluster started. It is safe to
// call more than once.
func (c *Cluster) Close() {
	c.mu.Lock()
	ps := make([]*proc, 0, len(c.procs))
	for p := range c.procs {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	for _, p := range ps {
		c.stop(p)
	}
	for _, b := range c.bookies {
		b.p = nil
		for _, d := range b.disks {
			_ = d.Close()
		}
		b.disks = nil
	}
	c.ports.release()
	_ = os.RemoveAll(c.tmpDir())
}

// tmpDir is every JVM's java.io.tmpdir. RocksDB, Netty, JNA and Vert.x
// unpack their native libraries there at each start (15 MB for RocksDB
// alone) and delete them only at a clean exit, which a killed bookie never
// has: a run of hundreds of restarts left gigabytes in /tmp before each
// cluster had its own, removed at Close.
func (c *Cluster) tmpDir() string { return filepath.Join(c.opts.Dir, "tmp") }

// mountDisks mounts the bookie's journal and ledger directories on file
// systems that can lose power, each over a backing directory beside it
// (journal.disk, ledgers.disk).
func (c *Cluster) mountDisks(b *Bookie) error {
	for _, d := range diskDirs {
		mnt, backing := b.diskPaths(d)
		for _, dir := range []string{mnt, backing} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		fsys, err := powerloss.Mount(backing, mnt)
		if err != nil {
			return fmt.Errorf("bookie %s: %w", b.Name, err)
		}
		b.disks = append(b.disks, fsys)
	}
	return nil
}

// diskPaths are the mount point of the bookie's directory d and the
// backing directory beside it.
func (b *Bookie) diskPaths(d string) (mnt, backing string) {
	return filepath.Join(b.dir, d), filepath.Join(b.dir, d+".disk")
}

// wipe empties one of the bookie's directories; a mounted one keeps its
// mount point.
func (c *Cluster) wipe(b *Bookie, d string) error {
	dir := filepath.Join(b.dir, d)
	if len(b.disks) == 0 {
		return os.RemoveAll(dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// PowerLoss is a power loss of the bookie's machine: its process is
// killed, and what its journal and ledger files held that no fsync made
// durable is gone (package powerloss); the disks are mounted again for a
// restart. It reports the files that lost writes. The cluster must have
// been started with PowerLoss.
func (c *Cluster) PowerLoss(b *Bookie) (int, error) {
	if len(b.disks) == 0 {
		return 0, fmt.Errorf("bookie %s: no disk that can lose power (cluster.Options.PowerLoss)", b.Name)
	}
	if b.p != nil {
		c.stop(b.p)
		b.p = nil
	}
	lost := 0
	for i, d := range b.disks {
		n, err := d.PowerLoss()
		lost += n
		if err != nil {
			return lost, fmt.Errorf("bookie %s: %w", b.Name, err)
		}
		mnt, backing := b.diskPaths(diskDirs[i])
		if b.disks[i], err = powerloss.Mount(backing, mnt); err != nil {
			b.disks = b.disks[:i]
			return lost, fmt.Errorf("bookie %s: %w", b.Name, err)
		}
	}
	return lost, nil
}

// SyncDisks makes what the bookie wrote to its journal (or, journal
// false, its ledger directories too) durable, as the operating system's
// write-back does in time: what its process wrote and no fsync flushed.
func (c *Cluster) SyncDisks(b *Bookie, journalOnly bool) error {
	if len(b.disks) == 0 {
		return fmt.Errorf("bookie %s: no disk that can lose power (cluster.Options.PowerLoss)", b.Name)
	}
	for i, d := range b.disks {
		if !journalOnly || diskDirs[i] == "journal" {
			d.Sync()
		}
	}
	return nil
}

// LeftoverMounts lists the mounts under dir (a cluster's directory) that
// are still mounted: what a run left behind, for tests that hold every
// exit path to unmounting.
func LeftoverMounts(dir string) []string {
	b, _ := os.ReadFile("/proc/self/mounts")
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir) {
			out = append(out, f[1])
		}
	}
	return out
}

// Leftover lists the running JVMs whose command line names dir (a
// cluster's directory): what a run left behind, for tests that hold every
// exit path to reaping its processes.
func Leftover(dir string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), dir) && strings.Contains(string(cmd), "java") {
			out = append(out, pid)
		}
	}
	return out
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (no log)"
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return "  " + strings.Join(lines, "\n  ")
}

// log4j2 sends every process's logging to its stderr, which is its log file.
const log4j2 = `status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{HH:mm:ss.SSS} %-5level [%t] %c{1} - %msg%n
rootLogger.level = info
rootLogger.appenderRef.err.ref = err
`

package realkafka

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Meta is a repetition's meta.json: what ran and the wall-clock facts the
// converter needs.
type Meta struct {
	Scenario       string            `json:"scenario"`
	BrokerVersion  string            `json:"broker_version"`
	ClientVersions map[string]string `json:"client_versions"` // group → version
	Brokers        int               `json:"brokers"`
	T0Ms           int64             `json:"t0_ms"` // scenario time 0 on the wall clock
	EndMs          int64             `json:"end_ms"`
	DurationMs     int64             `json:"duration_ms"`
	MeasureFromMs  int64             `json:"measure_from_ms,omitempty"`
	Partitions     map[string]int    `json:"partitions"` // topic → partitions
	Groups         []MetaGroup       `json:"groups"`
	// Broker start-up: exec of each JVM and its "Kafka Server started" line.
	BrokerExecMs    map[string]int64 `json:"broker_exec_ms"`
	BrokerStartedMs map[string]int64 `json:"broker_started_ms"`
	LoadAvgStart    string           `json:"loadavg_start"`
	LoadAvgEnd      string           `json:"loadavg_end"`
	SetupMs         int64            `json:"setup_ms"` // from the command's start to t0
	WallMs          int64            `json:"wall_ms"`  // the whole repetition
	Dropped         []string         `json:"dropped,omitempty"`
	Notes           []string         `json:"notes,omitempty"`
	// Rep and Seed: the repetition and its seed (RepetitionSeed); Phases:
	// the phase drawn for each fault subject; DriverSeeds: each process
	// incarnation's workload seed ("member.inc" → seed).
	Rep         int              `json:"rep,omitempty"`
	Seed        uint64           `json:"seed,omitempty"`
	Phases      []Phase          `json:"fault_phases,omitempty"`
	DriverSeeds map[string]int64 `json:"driver_seeds,omitempty"`
}

// MetaGroup is one group: its members and their subscriptions.
type MetaGroup struct {
	ID        string   `json:"id"`
	Members   []string `json:"members"` // every slot, joined ones too
	Subscribe []string `json:"subscribe"`
	Consumer  bool     `json:"consumer,omitempty"`
}

type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	ready chan struct{} // closed when the driver printed "ready"
}

// Runner runs one repetition of a plan.
type Runner struct {
	Plan     *Plan
	Dir      string
	Jars     *Jars
	Progress io.Writer

	brokerCP string
	driverCP map[string]string
	mu       sync.Mutex
	procs    map[string]*proc
	standby  map[string]*proc // a member's next JVM, started ahead and waiting for its go
	inc      map[string]int
	faultLog *os.File
	meta     Meta
	boost    int // how far the orchestrator raised its own priority (nice −boost)
	// lastStopped is the broker the last broker-kill/term stopped (a
	// coordinator target restarts that one).
	lastStopped string
	// down: the hosts (Host.Name) that a host-down has silenced.
	down map[string]bool
	// loss: the network-wide loss now in force (a re-created host gets it).
	loss float64
	// admins: add-partitions' Admin JVMs, started ahead, by action index.
	admins map[string]*proc
}

func (r *Runner) say(format string, args ...any) { fmt.Fprintf(r.Progress, format+"\n", args...) }

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

// Prepare fetches the jars the plan needs (before any namespace is made).
func (r *Runner) Prepare() error {
	var err error
	if r.brokerCP, err = r.Jars.Broker(r.Plan.BrokerVersion); err != nil {
		return err
	}
	r.driverCP = map[string]string{}
	for _, m := range r.Plan.Members {
		if _, ok := r.driverCP[m.ClientVersion]; ok {
			continue
		}
		if r.driverCP[m.ClientVersion], err = r.Jars.Driver(m.ClientVersion); err != nil {
			return err
		}
	}
	return nil
}

// Run performs one repetition into r.Dir: hosts, cluster, topic, members,
// the fault timeline on the wall clock, then teardown. It always tears down.
func (r *Runner) Run(ctx context.Context) (err error) {
	start := time.Now()
	p := r.Plan
	sc := p.Scenario
	for _, d := range []string{"brokers", "members", "conf"} {
		if err := os.MkdirAll(filepath.Join(r.Dir, d), 0o755); err != nil {
			return err
		}
	}
	r.procs, r.standby, r.inc = map[string]*proc{}, map[string]*proc{}, map[string]int{}
	r.down, r.admins, r.loss = map[string]bool{}, map[string]*proc{}, sc.Network.Loss
	r.meta = Meta{Scenario: sc.Name, BrokerVersion: p.BrokerVersion, Brokers: p.Brokers, ClientVersions: map[string]string{},
		DurationMs: sc.Duration.Milliseconds(), MeasureFromMs: sc.MeasureFrom.Milliseconds(), Partitions: map[string]int{},
		BrokerExecMs: map[string]int64{}, BrokerStartedMs: map[string]int64{}, LoadAvgStart: loadavg(),
		Dropped: p.Dropped, Notes: p.Notes, Rep: p.Rep, Seed: p.Seed, Phases: p.Phases, DriverSeeds: map[string]int64{}}
	for _, t := range p.Topics {
		r.meta.Partitions[t.Name] = t.Partitions
	}
	for _, g := range p.Groups {
		mg := MetaGroup{ID: g}
		for _, m := range p.Members {
			if m.Group == g {
				mg.Members = append(mg.Members, m.Name)
				mg.Subscribe = m.Subscribe
				mg.Consumer = m.Consumer
				r.meta.ClientVersions[g] = m.ClientVersion
			}
		}
		r.meta.Groups = append(r.meta.Groups, mg)
	}
	if r.faultLog, err = os.Create(filepath.Join(r.Dir, "faults.jsonl")); err != nil {
		return err
	}
	defer r.faultLog.Close()
	defer func() {
		r.teardown()
		if left := Cleanup(); len(left) > 0 && err == nil {
			err = fmt.Errorf("could not remove %s", strings.Join(left, ", "))
		}
	}()
	// The orchestrator runs at nice −10 and its JVMs at 0, so that the
	// fault timeline's wake-ups are not delayed by the JVMs (§6.6 "CPU
	// contention": nice the orchestrator).
	if boostSelf(-10) {
		r.boost = 10
		defer boostSelf(0)
	}
	r.say("setting up %d namespaces on bridge %s …", 2+p.Brokers+len(p.Members), Bridge)
	if err := MakeBridge(); err != nil {
		return err
	}
	hosts := []Host{ControllerHost(), ToolHost()}
	for i := 0; i < p.Brokers; i++ {
		hosts = append(hosts, BrokerHost(i))
	}
	for _, m := range p.Members {
		hosts = append(hosts, MemberHost(m.Index))
	}
	for _, h := range hosts {
		if err := MakeHost(h); err != nil {
			return err
		}
	}
	if sc.Network.Loss > 0 {
		for _, h := range hosts[2:] {
			if err := SetLoss(h, sc.Network.Loss); err != nil {
				return err
			}
		}
	}
	if err := r.startCluster(ctx); err != nil {
		return err
	}
	if err := r.createTopics(ctx); err != nil {
		return err
	}
	// The timeline: member starts and faults on one wall clock.
	var acts []Action
	for _, m := range p.Members {
		if !m.Deferred {
			acts = append(acts, Action{At: m.StartAt, Kind: "start", Target: m.Name, Fault: "start"})
		}
	}
	acts = append(acts, p.Actions...)
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].At < acts[j].At })
	acts = withPrepares(acts)
	// Every member's first JVM starts before t0 and waits for its go: the
	// scenario's start instant is the go, not the JVM's exec (§6.6: a JVM
	// takes seconds to load the client, tens of seconds on a loaded machine).
	r.say("starting %d member JVMs ahead of t0 …", len(p.Members))
	for _, m := range p.Members {
		if !m.Deferred {
			if _, err := r.prepare(r.member(m.Name), nil); err != nil {
				return err
			}
		}
	}
	if err := r.startAdmins(); err != nil {
		return err
	}
	if err := r.waitReady(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	r.meta.T0Ms = t0.UnixMilli()
	r.meta.SetupMs = t0.Sub(start).Milliseconds()
	r.say("t0: starting %d members; the run lasts %v (wall clock)", len(p.Members), sc.Duration)
	logf := func(rec Record) {
		b, _ := json.Marshal(rec)
		r.mu.Lock()
		r.faultLog.Write(append(b, '\n'))
		r.mu.Unlock()
		if rec.Kind != "prepare" && (rec.Kind != "start" || rec.Fault != "start") {
			r.say("  %6.1f s  %s %s %s%s", float64(rec.TsMs-r.meta.T0Ms)/1000, rec.Kind, rec.Target, rec.Value, errSuffix(rec.Err))
		}
	}
	err = RunTimeline(ctx, t0, sc.Duration, acts, r.do, logf)
	r.meta.EndMs = time.Now().UnixMilli()
	if err != nil {
		return fmt.Errorf("interrupted: %v", err)
	}
	r.meta.LoadAvgEnd = loadavg()
	r.teardown()
	r.meta.WallMs = time.Since(start).Milliseconds()
	b, _ := json.MarshalIndent(r.meta, "", "  ")
	return os.WriteFile(filepath.Join(r.Dir, "meta.json"), b, 0o644)
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (error: " + e + ")"
}

// teardown SIGKILLs every process the run started and waits for them.
func (r *Runner) teardown() {
	r.mu.Lock()
	ps := make([]*proc, 0, len(r.procs))
	for _, p := range r.procs {
		ps = append(ps, p)
	}
	for _, p := range r.standby {
		ps = append(ps, p)
	}
	for _, p := range r.admins {
		ps = append(ps, p)
	}
	r.procs, r.standby, r.admins = map[string]*proc{}, map[string]*proc{}, map[string]*proc{}
	r.mu.Unlock()
	for _, p := range ps {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	for _, p := range ps {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// spawn starts a JVM in host h's namespace; stdout goes to out (nil: a file).
func (r *Runner) spawn(name string, h Host, jvm []string, out string, errf string) (*proc, error) {
	args := append([]string{"-n", strconv.Itoa(r.boost), "ip", "netns", "exec", h.NS(), "java", jvmMarker}, jvm...)
	cmd := exec.Command("nice", args...)                  // back to niceness 0 when the orchestrator is boosted
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches simrun only
	of, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	ef, err := os.OpenFile(errf, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		of.Close()
		return nil, err
	}
	cmd.Stderr = ef
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		of.Close()
		ef.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, stdin: stdin, done: make(chan struct{}), ready: make(chan struct{})}
	copied := make(chan struct{})
	go func() { // the driver's events into the file; note "ready"
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		ready := false
		for sc.Scan() {
			l := sc.Bytes()
			if !ready && strings.Contains(string(l), `"event":"ready"`) {
				ready = true
				close(p.ready)
			}
			of.Write(append(l, '\n'))
		}
		close(copied)
	}()
	go func() {
		<-copied
		_ = cmd.Wait()
		of.Close()
		ef.Close()
		close(p.done)
	}()
	return p, nil
}

func (r *Runner) confFile(name, text string) (string, error) {
	f := filepath.Join(r.Dir, "conf", name)
	return f, os.WriteFile(f, []byte(text), 0o644)
}

// log4j2Props is the log4j2 configuration of every 4.x broker and every
// client: epoch-ms timestamps, thread, logger, message (§1.5).
func log4j2Props(debugGMM bool) string {
	// shutdownHook = disable: log4j2 would otherwise stop logging when the
	// JVM begins to exit, and lose the client's lines of close() after
	// SIGTERM (the LeaveGroup line among them) [measured here].
	s := `status = warn
shutdownHook = disable
appender.f.type = File
appender.f.name = F
appender.f.fileName = ${sys:rk.log}
appender.f.layout.type = PatternLayout
appender.f.layout.pattern = %d{UNIX_MILLIS} %p [%t] %c %m%n
rootLogger.level = INFO
rootLogger.appenderRef.f.ref = F
logger.req.name = kafka.request.logger
logger.req.level = WARN
`
	if debugGMM {
		s += "logger.gmm.name = org.apache.kafka.coordinator.group.GroupMetadataManager\nlogger.gmm.level = DEBUG\n"
	}
	return s
}

// clientDebug switches on the classic client's DEBUG lines the converter
// reads: "Sending Heartbeat request …" and "Received successful Heartbeat
// response" (AbstractCoordinator.sendHeartbeatRequest and
// HeartbeatResponseHandler.handle, @3.9.1 and @4.4.0). AbstractCoordinator
// logs through logContext.logger(getClass()), i.e. under its subclass's
// name, ConsumerCoordinator, in 3.x and 4.x (a previous run measured no
// DEBUG line from the AbstractCoordinator logger alone); both are named so
// that a client which logs under AbstractCoordinator (2.8) has them too.
const clientDebug = `logger.ac.name = org.apache.kafka.clients.consumer.internals.AbstractCoordinator
logger.ac.level = DEBUG
logger.cc.name = org.apache.kafka.clients.consumer.internals.ConsumerCoordinator
logger.cc.level = DEBUG
`

// reload4jProps is the 3.x brokers' reload4j configuration: reload4j has no
// epoch-ms date pattern, so the JVM runs in UTC and the parser reads
// "yyyy-MM-dd HH:mm:ss,SSS" as UTC.
const reload4jProps = `log4j.rootLogger=INFO, F
log4j.appender.F=org.apache.log4j.FileAppender
log4j.appender.F.File=${rk.log}
log4j.appender.F.layout=org.apache.log4j.PatternLayout
log4j.appender.F.layout.ConversionPattern=%d{yyyy-MM-dd HH:mm:ss,SSS} %p [%t] %c %m%n
log4j.logger.kafka.request.logger=WARN
`

// brokerProps is node id's server.properties (§1.4, separate controller).
func (r *Runner) brokerProps(i int) string {
	p := r.Plan
	c := p.Scenario.Coordinator
	h := BrokerHost(i)
	rf := min(p.Brokers, 3)
	voters := fmt.Sprintf("%d@%s:9093", ctrlNodeID, ControllerHost().Addr)
	s := fmt.Sprintf(`process.roles=broker
node.id=%d
controller.quorum.voters=%s
listeners=PLAINTEXT://%s:9092
advertised.listeners=PLAINTEXT://%s:9092
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%s
num.partitions=1
offsets.topic.replication.factor=%d
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=%d
transaction.state.log.min.isr=1
num.network.threads=2
num.io.threads=2
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=%d
group.min.session.timeout.ms=%d
group.max.session.timeout.ms=%d
offsets.commit.timeout.ms=%d
`, i, voters, h.Addr, h.Addr, filepath.Join(r.Dir, "data", h.Name), rf, rf,
		c.InitialRebalanceDelay.Milliseconds(), c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds(),
		c.OffsetsCommitTimeout.Milliseconds())
	if c.MaxSize > 0 && c.MaxSize < 1<<31-1 {
		s += fmt.Sprintf("group.max.size=%d\n", c.MaxSize)
	}
	if strings.HasPrefix(p.BrokerVersion, "4.") {
		s += "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\ngroup.coordinator.threads=1\n"
		if c.ConsumerMigrationPolicy != "" {
			s += "group.consumer.migration.policy=" + c.ConsumerMigrationPolicy + "\n"
		}
		if c.ConsumerSessionTimeout > 0 {
			s += fmt.Sprintf("group.consumer.session.timeout.ms=%d\ngroup.consumer.min.session.timeout.ms=%d\ngroup.consumer.max.session.timeout.ms=%d\n",
				c.ConsumerSessionTimeout.Milliseconds(), min(c.ConsumerMinSessionTimeout, c.ConsumerSessionTimeout).Milliseconds(), max(c.ConsumerMaxSessionTimeout, c.ConsumerSessionTimeout).Milliseconds())
		}
		if c.ConsumerHeartbeatInterval > 0 {
			s += fmt.Sprintf("group.consumer.heartbeat.interval.ms=%d\ngroup.consumer.min.heartbeat.interval.ms=%d\ngroup.consumer.max.heartbeat.interval.ms=%d\n",
				c.ConsumerHeartbeatInterval.Milliseconds(), min(c.ConsumerMinHeartbeatInterval, c.ConsumerHeartbeatInterval).Milliseconds(), max(c.ConsumerMaxHeartbeatInterval, c.ConsumerHeartbeatInterval).Milliseconds())
		}
	}
	return s
}

func (r *Runner) controllerProps() string {
	h := ControllerHost()
	return fmt.Sprintf(`process.roles=controller
node.id=%d
controller.quorum.voters=%d@%s:9093
listeners=CONTROLLER://%s:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%s
num.network.threads=1
num.io.threads=1
`, ctrlNodeID, ctrlNodeID, h.Addr, h.Addr, filepath.Join(r.Dir, "data", h.Name))
}

func (r *Runner) logConf() (string, []string, error) {
	if strings.HasPrefix(r.Plan.BrokerVersion, "3.") {
		f, err := r.confFile("log4j.properties", reload4jProps)
		return f, []string{"-Dlog4j.configuration=file:" + f, "-Duser.timezone=UTC"}, err
	}
	consumer := false
	for _, m := range r.Plan.Members {
		consumer = consumer || m.Consumer
	}
	for _, a := range r.Plan.Actions {
		consumer = consumer || a.Set["group.protocol"] == "consumer"
	}
	f, err := r.confFile("log4j2-broker.properties", log4j2Props(consumer))
	return f, []string{"-Dlog4j2.configurationFile=" + f}, err
}

// startCluster formats and starts the controller and the brokers and waits
// for each one's "Kafka Server started" (KafkaRaftServer.scala:98@v8.0.0).
func (r *Runner) startCluster(ctx context.Context) error {
	p := r.Plan
	_, logArgs, err := r.logConf()
	if err != nil {
		return err
	}
	idOut, err := exec.Command("java", "-cp", r.brokerCP, "kafka.tools.StorageTool", "random-uuid").Output()
	if err != nil {
		return fmt.Errorf("kafka.tools.StorageTool random-uuid: %v", err)
	}
	id := strings.TrimSpace(string(idOut))
	type node struct {
		name  string
		host  Host
		props string
		heap  string
	}
	nodes := []node{{"controller", ControllerHost(), r.controllerProps(), "-Xmx256m"}}
	for i := 0; i < p.Brokers; i++ {
		nodes = append(nodes, node{fmt.Sprintf("broker-%d", i), BrokerHost(i), r.brokerProps(i), "-Xms512m"})
	}
	r.say("formatting and starting the controller and %d broker(s) (Kafka %s) …", p.Brokers, p.BrokerVersion)
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for k, n := range nodes {
		f, err := r.confFile(n.name+".properties", n.props)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func(k int, n node, f string) {
			defer wg.Done()
			args := append([]string{"-n", strconv.Itoa(r.boost), "java", "-cp", r.brokerCP}, logArgs...)
			args = append(args, "-Drk.log="+filepath.Join(r.Dir, "brokers", n.name+".format.log"), "kafka.tools.StorageTool", "format", "-t", id, "-c", f)
			if out, err := exec.Command("nice", args...).CombinedOutput(); err != nil {
				errs[k] = fmt.Errorf("formatting %s: %v: %s", n.name, err, tail(string(out), 600))
			}
		}(k, n, f)
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	for _, n := range nodes {
		if err := r.startNode(n.name, n.host, n.heap, logArgs); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for _, n := range nodes {
		for {
			if ts, ok := firstLine(filepath.Join(r.Dir, "brokers", n.name+".log"), "Kafka Server started"); ok {
				r.meta.BrokerStartedMs[n.name] = ts
				r.say("  %s started %.1f s after exec", n.name, float64(ts-r.meta.BrokerExecMs[n.name])/1000)
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not log \"Kafka Server started\" within 5 minutes (see %s)", n.name, filepath.Join(r.Dir, "brokers"))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-r.procs[n.name].done:
				return fmt.Errorf("%s exited during start-up (see %s)", n.name, filepath.Join(r.Dir, "brokers", n.name+".out"))
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// startNode starts (or restarts, on its log.dirs) the controller or a broker.
func (r *Runner) startNode(name string, h Host, heap string, logArgs []string) error {
	props := filepath.Join(r.Dir, "conf", name+".properties")
	args := []string{heap, "-Xmx512m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true", "-cp", r.brokerCP}
	args = append(args, logArgs...)
	args = append(args, "-Drk.log="+filepath.Join(r.Dir, "brokers", name+".log"), "kafka.Kafka", props)
	r.meta.BrokerExecMs[name] = time.Now().UnixMilli()
	p, err := r.spawn(name, h, args, filepath.Join(r.Dir, "brokers", name+".out"), filepath.Join(r.Dir, "brokers", name+".out"))
	if err == nil {
		r.mu.Lock()
		r.procs[name] = p
		r.mu.Unlock()
	}
	return err
}

// firstLine returns the epoch ms of the first line of file containing s.
func firstLine(file, s string) (int64, bool) {
	f, err := os.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			if l, ok := ParseLogLine(sc.Text()); ok {
				return l.TsMs, true
			}
		}
	}
	return 0, false
}

func (r *Runner) bootstrap() string {
	var s []string
	for i := 0; i < r.Plan.Brokers; i++ {
		s = append(s, BrokerHost(i).Addr+":9092")
	}
	return strings.Join(s, ",")
}

// createTopics creates the scenario's topics from the tool host and fills
// them so that every poll returns records for the whole run (§6.2).
func (r *Runner) createTopics(ctx context.Context) error {
	p := r.Plan
	rf := min(p.Brokers, 3)
	var ts []string
	for _, t := range p.Topics {
		ts = append(ts, fmt.Sprintf("%s:%d:%d", t.Name, t.Partitions, rf))
	}
	// Enough records for a member that owns one partition and polls
	// max.poll.records = 10 every poll.interval (at least 10 ms) all run long.
	per := int(p.Scenario.Duration.Seconds()*1000/100) * 10
	if len(p.Members) > 0 {
		if pi := p.Scenario.Groups[0].Workload.PollInterval; pi.Kind == "constant" && pi.Value > 0 {
			per = int(p.Scenario.Duration.Milliseconds()/max(pi.Value.Milliseconds(), 10)) * 10
		}
	}
	per = max(min(per, 40000), 1000)
	cp := ""
	for _, c := range r.driverCP {
		cp = c
		break
	}
	conf, err := r.confFile("admin.properties", fmt.Sprintf("bootstrap.servers=%s\ndriver.op=create\ndriver.topics=%s\ndriver.records=%d\ndriver.groups=%s\n",
		r.bootstrap(), strings.Join(ts, ","), per, strings.Join(p.Groups, ",")))
	if err != nil {
		return err
	}
	lc, err := r.confFile("log4j2-client.properties", log4j2Props(false)+clientDebug)
	if err != nil {
		return err
	}
	r.say("creating topics %s and writing %d records per partition …", strings.Join(ts, ","), per)
	args := []string{"-n", strconv.Itoa(r.boost), "ip", "netns", "exec", ToolHost().NS(), "java", jvmMarker, "-Xmx256m", "-cp", cp, "-Dlog4j2.configurationFile=" + lc,
		"-Drk.log=" + filepath.Join(r.Dir, "admin.log"), "Driver", "admin", conf}
	cmd := exec.CommandContext(ctx, "nice", args...)
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(r.Dir, "admin.out"), out, 0o644)
	if err != nil || !strings.Contains(string(out), "coordinator_ready") {
		return fmt.Errorf("creating the topics failed (see %s): %v: %s", filepath.Join(r.Dir, "admin.out"), err, tail(string(out), 600))
	}
	return nil
}

func (r *Runner) member(name string) *Member {
	for i := range r.Plan.Members {
		if r.Plan.Members[i].Name == name {
			return &r.Plan.Members[i]
		}
	}
	return nil
}

// withPrepares adds, before every start of a member after its first, a
// "prepare" that starts the member's next JVM ahead (60 s before, or just
// after its previous start), so that the start itself is only the go.
func withPrepares(acts []Action) []Action {
	const lead = 60 * time.Second
	last := map[string]time.Duration{}
	var out []Action
	for _, a := range acts {
		if a.Kind == "start" {
			if prev, ok := last[a.Target]; ok || a.Fault != "start" {
				at := max(a.At-lead, 0)
				if ok {
					at = max(at, prev)
				}
				out = append(out, Action{At: at, Kind: "prepare", Target: a.Target, Fault: a.Fault, Set: a.Set})
			}
			last[a.Target] = a.At
		}
	}
	// The actions before the prepares of the same instant: a restart's
	// prepare at its member's first start (at = prev) must not replace the
	// standby JVM that the start is about to give its go [measured: the go
	// went to the new JVM, with a rolling restart's set: already applied].
	out = append(slices.Clone(acts), out...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// waitReady waits until every standby JVM printed "ready".
func (r *Runner) waitReady(ctx context.Context) error {
	deadline := time.After(5 * time.Minute)
	t := time.Now()
	for name, p := range r.standby {
		select {
		case <-p.ready:
		case <-p.done:
			return fmt.Errorf("member %s's JVM exited before it was ready (see %s)", name, filepath.Join(r.Dir, "members"))
		case <-deadline:
			return fmt.Errorf("member %s's JVM was not ready within 5 minutes", name)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for name, p := range r.admins {
		select {
		case <-p.ready:
		case <-p.done:
			return fmt.Errorf("the Admin JVM of %s exited before it was ready (see %s)", name, filepath.Join(r.Dir, "admin-*.out"))
		case <-deadline:
			return fmt.Errorf("the Admin JVM of %s was not ready within 5 minutes", name)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.say("  member JVMs ready %.1f s after the first exec", time.Since(t).Seconds())
	return nil
}

// goMember makes member m's standby JVM (started now if there is none) the
// member's process and tells it to start.
func (r *Runner) goMember(m *Member, set map[string]string) (int, error) {
	r.mu.Lock()
	p := r.standby[m.Name]
	r.mu.Unlock()
	if p == nil {
		var err error
		if p, err = r.prepare(m, set); err != nil {
			return 0, err
		}
		if p == nil {
			return 0, fmt.Errorf("%s's host is down", m.Name)
		}
	}
	r.mu.Lock()
	delete(r.standby, m.Name)
	r.procs[m.Name] = p
	r.mu.Unlock()
	_, err := io.WriteString(p.stdin, "{\"go\": true}\n")
	return p.cmd.Process.Pid, err
}

// prepare starts member m's next JVM, which loads the client and waits for
// its go. set (rolling-restart with set:) changes the member's client
// properties from this JVM on. On a host that is down it starts the JVM
// without its warm-up request (it would only meet the drop-all rules and
// leave the client in a connection-setup back-off at the host's return).
func (r *Runner) prepare(m *Member, set map[string]string) (*proc, error) {
	applySet(m, set)
	r.inc[m.Name]++
	inc := r.inc[m.Name]
	var b strings.Builder
	b.WriteString("bootstrap.servers=" + r.bootstrap() + "\n")
	keys := make([]string, 0, len(m.Props))
	for k := range m.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k + "=" + m.Props[k] + "\n")
	}
	keys = keys[:0]
	for k := range m.Driver {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m.Driver[k]
		if k == "seed" { // each process incarnation draws its own workload
			seed := DriverSeed(r.Plan.Seed, m.Name, inc)
			r.mu.Lock()
			r.meta.DriverSeeds[fmt.Sprintf("%s.%d", m.Name, inc)] = seed
			r.mu.Unlock()
			v = strconv.FormatInt(seed, 10)
		}
		b.WriteString("driver." + k + "=" + v + "\n")
	}
	if r.down[MemberHost(m.Index).Name] {
		b.WriteString("driver.warmup=false\n")
	}
	conf, err := r.confFile(fmt.Sprintf("%s.%d.properties", m.Name, inc), b.String())
	if err != nil {
		return nil, err
	}
	lc := filepath.Join(r.Dir, "conf", "log4j2-client.properties")
	args := []string{"-Xms64m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", r.driverCP[m.ClientVersion],
		"-Dlog4j2.configurationFile=" + lc, "-Drk.log=" + filepath.Join(r.Dir, "members", fmt.Sprintf("%s.%d.log", m.Name, inc)),
		"Driver", "consume", conf}
	p, err := r.spawn(m.Name, MemberHost(m.Index), args, filepath.Join(r.Dir, "members", m.Name+".events.jsonl"),
		filepath.Join(r.Dir, "members", fmt.Sprintf("%s.%d.err", m.Name, inc)))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.standby[m.Name] = p
	r.mu.Unlock()
	return p, nil
}

// coordinator returns the broker that leads __consumer_offsets-0 now, read
// from the broker logs' coordinator election lines (§2.1).
func (r *Runner) coordinator() string {
	best, bestTs := "broker-0", int64(0)
	for i := 0; i < r.Plan.Brokers; i++ {
		name := fmt.Sprintf("broker-%d", i)
		for _, l := range readLines(filepath.Join(r.Dir, "brokers", name+".log")) {
			e, ok := ParseBroker(l)
			if ok && e.Kind == BrokerElected && e.TsMs >= bestTs {
				best, bestTs = name, e.TsMs
			}
		}
	}
	return best
}

func readLines(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return strings.Split(string(b), "\n")
}

func brokerIndex(name string) (int, bool) {
	i, err := strconv.Atoi(strings.TrimPrefix(name, "broker-"))
	return i, err == nil && strings.HasPrefix(name, "broker-")
}

// waitExit waits, at most limit, for member name's running process (the
// previous incarnation, closing after a SIGTERM) to exit, then SIGKILLs it:
// a restarted member's new process starts after the old one has exited, as
// in the simulator, where a process restarts only once the old one is gone
// (a rolling restart's close can outlast its downtime). It returns how
// long it waited.
func (r *Runner) waitExit(name string, limit time.Duration) time.Duration {
	r.mu.Lock()
	p := r.procs[name]
	r.mu.Unlock()
	if p == nil {
		return 0
	}
	t := time.Now()
	select {
	case <-p.done:
	default:
		select {
		case <-p.done:
		case <-time.After(limit):
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
	}
	return time.Since(t)
}

// do performs one timeline action.
func (r *Runner) do(a Action) (int, string, error) {
	signal := func(name string, sig syscall.Signal) (int, error) {
		r.mu.Lock()
		p := r.procs[name]
		r.mu.Unlock()
		if p == nil {
			return 0, fmt.Errorf("%s is not running", name)
		}
		return p.cmd.Process.Pid, p.cmd.Process.Signal(sig)
	}
	resolve := func(t string) string {
		if t == "coordinator" {
			return r.coordinator()
		}
		return t
	}
	switch a.Kind {
	case "start":
		m := r.member(a.Target)
		if m == nil {
			return 0, "", fmt.Errorf("unknown member %s", a.Target)
		}
		if r.down[MemberHost(m.Index).Name] {
			return 0, "", fmt.Errorf("%s's host is down", m.Name)
		}
		applySet(m, a.Set)
		waited := r.waitExit(m.Name, 60*time.Second)
		pid, err := r.goMember(m, a.Set)
		v := setValue(a.Set)
		if waited >= time.Millisecond {
			v = strings.TrimPrefix(v+fmt.Sprintf(",waited %d ms for the previous process to exit", waited.Milliseconds()), ",")
		}
		return pid, v, err
	case "prepare":
		m := r.member(a.Target)
		if m == nil {
			return 0, "", fmt.Errorf("unknown member %s", a.Target)
		}
		if r.down[MemberHost(m.Index).Name] {
			return 0, "deferred: host down", nil
		}
		p, err := r.prepare(m, a.Set)
		if err != nil {
			return 0, "", err
		}
		return p.cmd.Process.Pid, "", nil
	case "host-down", "broker-host-down":
		return r.hostDown(a)
	case "host-up", "broker-host-up":
		return r.hostUp(a)
	case "add-partitions":
		r.mu.Lock()
		p := r.admins[adminKey(a)]
		r.mu.Unlock()
		if p == nil {
			return 0, "", fmt.Errorf("no Admin JVM for %s", a.Fault)
		}
		_, err := io.WriteString(p.stdin, "go\n")
		return p.cmd.Process.Pid, strconv.Itoa(a.Count), err
	case "kill":
		pid, err := signal(a.Target, syscall.SIGKILL)
		return pid, "", err
	case "term":
		pid, err := signal(a.Target, syscall.SIGTERM)
		return pid, "", err
	case "stop":
		pid, err := signal(a.Target, syscall.SIGSTOP)
		return pid, "", err
	case "cont":
		pid, err := signal(a.Target, syscall.SIGCONT)
		return pid, "", err
	case "slow-poll":
		r.mu.Lock()
		p := r.procs[a.Target]
		r.mu.Unlock()
		if p == nil {
			return 0, "", fmt.Errorf("%s is not running", a.Target)
		}
		_, err := fmt.Fprintf(p.stdin, "{\"slow_poll_ms\": %d}\n", a.Dur.Milliseconds())
		return p.cmd.Process.Pid, strconv.FormatInt(a.Dur.Milliseconds(), 10), err
	case "cut", "heal":
		m := r.member(a.Target)
		if m == nil {
			return 0, "", fmt.Errorf("unknown member %s", a.Target)
		}
		b := resolve(a.Peer)
		i, ok := brokerIndex(b)
		if !ok {
			return 0, "", fmt.Errorf("unknown broker %s", b)
		}
		if a.Kind == "heal" {
			return 0, b, Heal(MemberHost(m.Index))
		}
		return 0, b, Cut(MemberHost(m.Index), BrokerHost(i).Addr, a.OneWay)
	case "loss":
		r.loss = a.Value
		var first error
		for i := 0; i < r.Plan.Brokers; i++ {
			if r.down[BrokerHost(i).Name] {
				continue
			}
			if err := SetLoss(BrokerHost(i), a.Value); err != nil && first == nil {
				first = err
			}
		}
		for _, m := range r.Plan.Members {
			if r.down[MemberHost(m.Index).Name] {
				continue
			}
			if err := SetLoss(MemberHost(m.Index), a.Value); err != nil && first == nil {
				first = err
			}
		}
		return 0, strconv.FormatFloat(a.Value, 'g', -1, 64), first
	case "broker-kill", "broker-term":
		b := resolve(a.Target)
		sig := syscall.SIGKILL
		if a.Kind == "broker-term" {
			sig = syscall.SIGTERM
		}
		pid, err := signal(b, sig)
		r.lastStopped = b
		return pid, b, err
	case "broker-start":
		b := a.Target
		if b == "coordinator" {
			b = r.lastStopped
		}
		i, ok := brokerIndex(b)
		if !ok {
			return 0, "", fmt.Errorf("unknown broker %s", a.Target)
		}
		r.mu.Lock()
		old := r.procs[b]
		r.mu.Unlock()
		if old != nil {
			select {
			case <-old.done:
			case <-time.After(30 * time.Second):
				_ = old.cmd.Process.Signal(syscall.SIGKILL)
				<-old.done
			}
		}
		_, logArgs, _ := r.logConf()
		err := r.startNode(b, BrokerHost(i), "-Xms512m", logArgs)
		pid := 0
		if p := r.procs[b]; p != nil {
			pid = p.cmd.Process.Pid
		}
		return pid, b, err
	}
	return 0, "", fmt.Errorf("unknown action %s", a.Kind)
}

// boostSelf sets every thread of this process to niceness n (Linux nice is
// per thread; threads made later inherit their creator's).
func boostSelf(n int) bool {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	ok := true
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if syscall.Setpriority(syscall.PRIO_PROCESS, tid, n) != nil {
			ok = false
		}
	}
	return ok
}

// applySet applies a rolling restart's set: to member m's client
// properties ("" removes a key).
func applySet(m *Member, set map[string]string) {
	if set == nil {
		return
	}
	props := map[string]string{}
	for k, v := range m.Props {
		props[k] = v
	}
	for k, v := range set {
		if v == "" {
			delete(props, k)
		} else {
			props[k] = v
		}
	}
	m.Props = props
	m.Consumer = props["group.protocol"] == "consumer"
}

// setValue writes a set: for the fault log ("k=v,…", sorted).
func setValue(set map[string]string) string {
	var kv []string
	for k, v := range set {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

func adminKey(a Action) string { return a.At.String() + " " + a.Target }

// startAdmins starts, before t0, one Admin JVM on the tool host per
// add-partitions step: it connects and waits for its go, so that the
// createPartitions request leaves at the fault's instant, not a JVM
// start-up later (§6.3: Admin createPartitions from rk-ctl).
func (r *Runner) startAdmins() error {
	cp := ""
	for _, c := range r.driverCP {
		cp = c
		break
	}
	lc := filepath.Join(r.Dir, "conf", "log4j2-client.properties")
	for k, a := range r.Plan.Actions {
		if a.Kind != "add-partitions" {
			continue
		}
		conf, err := r.confFile(fmt.Sprintf("admin-%d.properties", k), fmt.Sprintf("bootstrap.servers=%s\ndriver.op=partitions\ndriver.topic=%s\ndriver.count=%d\n",
			r.bootstrap(), a.Target, a.Count))
		if err != nil {
			return err
		}
		args := []string{"-Xmx128m", "-XX:+UseSerialGC", "-cp", cp, "-Dlog4j2.configurationFile=" + lc,
			"-Drk.log=" + filepath.Join(r.Dir, fmt.Sprintf("admin-%d.log", k)), "Driver", "admin", conf}
		out := filepath.Join(r.Dir, fmt.Sprintf("admin-%d.out", k))
		p, err := r.spawn("admin", ToolHost(), args, out, out)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.admins[adminKey(a)] = p
		r.mu.Unlock()
	}
	return nil
}

// hostDown silences a member's or a broker's host, kills its process and
// deletes its veth and namespace (§6.3 host-down): drop-all first, so that
// neither the kill's FIN/RST nor anything else leaves the host; the deletion
// discards its sockets. A host that comes back (host-up) is re-created at
// once with the same address and drop-all, so that its next process can be
// started ahead, and opened at host-up: the peers' stale segments then meet
// a fresh stack (RST), as when a real machine reboots.
func (r *Runner) hostDown(a Action) (int, string, error) {
	var h Host
	name, value := a.Target, ""
	if a.Kind == "broker-host-down" {
		if name == "coordinator" {
			name = r.coordinator()
		}
		i, ok := brokerIndex(name)
		if !ok {
			return 0, "", fmt.Errorf("unknown broker %s", a.Target)
		}
		h, value, r.lastStopped = BrokerHost(i), name, name
	} else {
		m := r.member(name)
		if m == nil {
			return 0, "", fmt.Errorf("unknown member %s", name)
		}
		h = MemberHost(m.Index)
	}
	if err := DropAll(h); err != nil {
		return 0, value, err
	}
	r.mu.Lock()
	p, sb := r.procs[name], r.standby[name]
	delete(r.procs, name)
	delete(r.standby, name)
	r.down[h.Name] = true
	r.mu.Unlock()
	pid := 0
	for _, q := range []*proc{p, sb} {
		if q == nil {
			continue
		}
		if q == p {
			pid = q.cmd.Process.Pid
		}
		_ = q.cmd.Process.Signal(syscall.SIGKILL)
		select {
		case <-q.done:
		case <-time.After(10 * time.Second):
		}
	}
	if err := DeleteHost(h); err != nil {
		return pid, value, err
	}
	if err := MakeHost(h); err != nil {
		return pid, value, err
	}
	if err := DropAll(h); err != nil {
		return pid, value, err
	}
	if m := r.member(name); m != nil && a.Dur > 0 {
		// The member comes back: its next JVM loads the client now, in
		// the silent namespace (no warm-up request), and gets its go at
		// host-up.
		if _, err := r.prepare(m, nil); err != nil {
			return pid, value, err
		}
	}
	return pid, value, nil
}

// hostUp opens a host that hostDown silenced and starts its process: a
// member's fresh JVM (started now, without a warm-up: the host was down),
// a broker on its log.dirs.
func (r *Runner) hostUp(a Action) (int, string, error) {
	name := a.Target
	if a.Kind == "broker-host-up" {
		if name == "coordinator" {
			name = r.lastStopped
		}
		i, ok := brokerIndex(name)
		if !ok {
			return 0, "", fmt.Errorf("unknown broker %s", a.Target)
		}
		h := BrokerHost(i)
		if err := r.openHost(h); err != nil {
			return 0, name, err
		}
		_, logArgs, _ := r.logConf()
		err := r.startNode(name, h, "-Xms512m", logArgs)
		pid := 0
		r.mu.Lock()
		if p := r.procs[name]; p != nil {
			pid = p.cmd.Process.Pid
		}
		r.mu.Unlock()
		return pid, name, err
	}
	m := r.member(name)
	if m == nil {
		return 0, "", fmt.Errorf("unknown member %s", name)
	}
	h := MemberHost(m.Index)
	r.mu.Lock()
	p := r.standby[m.Name]
	r.mu.Unlock()
	if p == nil { // without the warm-up: the host is still closed
		var err error
		if p, err = r.prepare(m, nil); err != nil {
			return 0, "", err
		}
	}
	if err := r.openHost(h); err != nil {
		return 0, "", err
	}
	r.mu.Lock()
	delete(r.standby, m.Name)
	r.procs[m.Name] = p
	r.mu.Unlock()
	_, err := io.WriteString(p.stdin, "{\"go\": true}\n")
	return p.cmd.Process.Pid, "", err
}

func (r *Runner) openHost(h Host) error {
	if err := Undrop(h); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.down, h.Name)
	r.mu.Unlock()
	if r.loss > 0 {
		return SetLoss(h, r.loss)
	}
	return nil
}

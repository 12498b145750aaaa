package realkafka

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The testbed's hosts: one network namespace each, joined by veth pairs to
// the bridge Bridge in the root namespace, addresses in Subnet, no route out
// (docs/real-kafka-testbed.md §6.2).
const (
	Bridge     = "rk-br0"
	Subnet     = "10.77.0"
	nsPrefix   = "rk-"
	jvmMarker  = "-Drebalsim.real=1" // on every JVM the testbed starts
	ctlHost    = "ctl"
	ctrlHost   = "c1"
	ctrlNodeID = 100
)

// Host is one namespace and its address.
type Host struct {
	Name string // namespace without the prefix: "b0", "m3", "c1", "ctl"
	Addr string
}

// NS is the namespace's name.
func (h Host) NS() string { return nsPrefix + h.Name }

// BrokerHost is broker i's host (10.77.0.(1+i)).
func BrokerHost(i int) Host { return Host{"b" + strconv.Itoa(i), fmt.Sprintf("%s.%d", Subnet, 1+i)} }

// MemberHost is member host i's (10.77.0.(10+i)).
func MemberHost(i int) Host { return Host{"m" + strconv.Itoa(i), fmt.Sprintf("%s.%d", Subnet, 10+i)} }

// ControllerHost and ToolHost are the controller's and the tools' hosts.
func ControllerHost() Host { return Host{ctrlHost, fmt.Sprintf("%s.%d", Subnet, ctrlNodeID)} }
func ToolHost() Host       { return Host{ctlHost, Subnet + ".250"} }

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// CheckTools says clearly what is missing to run the testbed.
func CheckTools() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("simrun real needs root: it makes network namespaces, a bridge and nftables rules (run it with sudo)")
	}
	for _, t := range []struct{ bin, how string }{
		{"ip", "apt-get install iproute2"},
		{"nft", "apt-get install nftables"},
		{"java", "install a Java 17 JDK (apt-get install openjdk-17-jdk-headless)"},
		{"javac", "install a Java 17 JDK (apt-get install openjdk-17-jdk-headless)"},
		{"mvn", "apt-get install maven"},
	} {
		if _, err := exec.LookPath(t.bin); err != nil {
			return fmt.Errorf("%s is not on PATH: %s", t.bin, t.how)
		}
	}
	return nil
}

// Leftovers lists the testbed's namespaces and bridge left by an earlier run.
func Leftovers() []string {
	var out []string
	b, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && strings.HasPrefix(f[0], nsPrefix) {
			out = append(out, "netns "+f[0])
		}
	}
	if exec.Command("ip", "link", "show", Bridge).Run() == nil {
		out = append(out, "link "+Bridge)
	}
	return out
}

// Cleanup kills the testbed's processes in its namespaces (only JVMs that
// carry its marker) and deletes the namespaces and the bridge. It returns
// what it could not remove.
func Cleanup() []string {
	for _, l := range Leftovers() {
		if ns, ok := strings.CutPrefix(l, "netns "); ok {
			killNS(ns)
		}
	}
	for _, l := range Leftovers() {
		if ns, ok := strings.CutPrefix(l, "netns "); ok {
			_ = run("ip", "netns", "delete", ns)
		} else {
			_ = run("ip", "link", "delete", Bridge)
		}
	}
	return Leftovers()
}

// killNS SIGKILLs the processes in namespace ns that the testbed started.
func killNS(ns string) {
	b, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + f + "/cmdline")
		if strings.Contains(string(cmd), jvmMarker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	time.Sleep(100 * time.Millisecond)
}

// MakeBridge creates the bridge.
func MakeBridge() error {
	if err := run("ip", "link", "add", Bridge, "type", "bridge"); err != nil {
		return err
	}
	return run("ip", "link", "set", Bridge, "up")
}

// MakeHost creates h's namespace, its veth into the bridge and its nftables
// table (chains in/out for cuts and drop-all, loss for loss windows).
func MakeHost(h Host) error {
	ns, veth := h.NS(), nsPrefix+h.Name+"-h"
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "set", veth, "master", Bridge, "up"},
		{"ip", "-n", ns, "addr", "add", h.Addr + "/24", "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return err
		}
	}
	return nft(ns, `add table inet rk
add chain inet rk in { type filter hook input priority 0; policy accept; }
add chain inet rk out { type filter hook output priority 0; policy accept; }
add chain inet rk loss { type filter hook output priority 1; policy accept; }
`)
}

// nft runs an nftables script inside namespace ns.
func nft(ns, script string) error {
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nft in %s: %v: %s (script: %q)", ns, err, strings.TrimSpace(string(out)), script)
	}
	return nil
}

// Cut drops traffic between h and addr (both ways, or h → addr only).
func Cut(h Host, addr string, oneWay bool) error {
	s := "add rule inet rk out ip daddr " + addr + " drop\n"
	if !oneWay {
		s += "add rule inet rk in ip saddr " + addr + " drop\n"
	}
	return nft(h.NS(), s)
}

// Heal removes every cut of h.
func Heal(h Host) error { return nft(h.NS(), "flush chain inet rk in\nflush chain inet rk out\n") }

// SetLoss makes h drop each outgoing TCP segment with probability p
// (nftables numgen, §6.3); p = 0 removes the rule.
func SetLoss(h Host, p float64) error {
	s := "flush chain inet rk loss\n"
	if p > 0 {
		s += fmt.Sprintf("add rule inet rk loss meta l4proto tcp numgen random mod 1000000 < %d drop\n", int64(p*1e6+0.5))
	}
	return nft(h.NS(), s)
}

// LockFile is held (flock) by the running `simrun real`: the testbed has one
// bridge and one address plan per machine.
const LockFile = "/run/rebalsim-real.lock"

// Lock takes the machine's testbed lock, or says which process holds it. A
// second `simrun real` must not clean up the namespaces of a live one.
func Lock() (release func(), err error) {
	f, err := os.OpenFile(LockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(LockFile)
		f.Close()
		return nil, fmt.Errorf("another simrun real is running (pid %s, lock %s); the testbed runs one at a time", strings.TrimSpace(string(b)), LockFile)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// DropAll makes h silent: its input and output chains drop every packet
// (no FIN, no RST, no reply leaves it); Undrop turns them back to accept.
func DropAll(h Host) error {
	return nft(h.NS(), "chain inet rk in { policy drop; }\nchain inet rk out { policy drop; }\n")
}

// Undrop ends DropAll (the cut rules, if any, stay).
func Undrop(h Host) error {
	return nft(h.NS(), "chain inet rk in { policy accept; }\nchain inet rk out { policy accept; }\n")
}

// DeleteHost deletes h's veth pair and namespace (§6.3 host-down: the
// sockets of the dead host are discarded without a FIN or RST leaving it).
// The veth is deleted first, synchronously: the namespace's own teardown is
// asynchronous, and a re-created host needs the veth's name.
func DeleteHost(h Host) error {
	if err := run("ip", "link", "delete", nsPrefix+h.Name+"-h"); err != nil {
		return err
	}
	return run("ip", "netns", "delete", h.NS())
}

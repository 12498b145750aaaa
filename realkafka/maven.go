package realkafka

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed java/Driver.java
var driverSource []byte

// DefaultCache is where jars are cached unless the user says otherwise
// (--cache or REBALSIM_CACHE): ~/.cache/rebalsim.
func DefaultCache() string {
	if d := os.Getenv("REBALSIM_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "rebalsim-cache")
	}
	return filepath.Join(home, ".cache", "rebalsim")
}

// logBackend returns the logging jars a broker of version v needs beside
// kafka_2.13's POM dependencies, which lack them (docs/real-kafka-testbed.md
// §1.5): reload4j for 3.x, log4j2 with the slf4j 1.7 binding for 4.x.
func logBackend(v string) string {
	dep := func(g, a, ver string) string {
		return "<dependency><groupId>" + g + "</groupId><artifactId>" + a + "</artifactId><version>" + ver + "</version></dependency>\n"
	}
	if strings.HasPrefix(v, "3.") {
		// Kafka: gradle/dependencies.gradle:149,158@v7.9.0 (slf4j 1.7.36, reload4j 1.2.25)
		return dep("org.slf4j", "slf4j-reload4j", "1.7.36") + dep("ch.qos.reload4j", "reload4j", "1.2.25")
	}
	l := "2.25.3" // 4.2+ (gradle/dependencies.gradle@v8.2.0); 4.0 and 4.1 ship 2.24.3
	if strings.HasPrefix(v, "4.0.") || strings.HasPrefix(v, "4.1.") {
		l = "2.24.3"
	}
	return dep("org.apache.logging.log4j", "log4j-core", l) + dep("org.apache.logging.log4j", "log4j-slf4j-impl", l)
}

func pom(artifact, deps string) string {
	return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rebalsim.real</groupId><artifactId>` + artifact + `</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
` + deps + `  </dependencies>
</project>
`
}

// BrokerPOM is the POM whose dependencies are a broker of version v.
func BrokerPOM(v string) string {
	return pom("broker", "<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>"+v+"</version></dependency>\n"+logBackend(v))
}

// DriverPOM is the POM of the driver built against kafka-clients v: the
// client and log4j2 with the slf4j 1.7 binding (every kafka-clients from 2.5
// to 4.4 uses slf4j-api 1.7).
func DriverPOM(v string) string {
	return pom("driver", "<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>"+v+"</version></dependency>\n"+
		"<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>\n"+
		"<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.24.3</version></dependency>\n")
}

// Jars fetches and caches the jars through Maven.
type Jars struct {
	Cache    string    // root of the cache (maven/ and lib/ under it)
	Progress io.Writer // one line per download
}

func (j *Jars) mvn(dir, what string) error {
	if _, err := exec.LookPath("mvn"); err != nil {
		return fmt.Errorf("mvn (Maven 3) is not on PATH: install it (apt-get install maven); it fetches the Kafka jars")
	}
	fmt.Fprintf(j.Progress, "fetching %s through Maven into %s …\n", what, dir)
	t := time.Now()
	cmd := exec.Command("mvn", "-B", "-q", "-Dmaven.repo.local="+filepath.Join(j.Cache, "maven"),
		"dependency:copy-dependencies", "-DoutputDirectory=lib")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(dir, "mvn.log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("maven could not fetch %s (see %s): %v\n%s", what, filepath.Join(dir, "mvn.log"), err, tail(string(out), 800))
	}
	fmt.Fprintf(j.Progress, "fetched %s in %.1f s\n", what, time.Since(t).Seconds())
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Broker returns the classpath of broker version v, fetching it once.
func (j *Jars) Broker(v string) (string, error) {
	dir := filepath.Join(j.Cache, "lib", "broker-"+v)
	cp := filepath.Join(dir, "lib", "*")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return cp, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(BrokerPOM(v)), 0o644); err != nil {
		return "", err
	}
	if err := j.mvn(dir, "broker "+v+" (org.apache.kafka:kafka_2.13)"); err != nil {
		return "", err
	}
	return cp, os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
}

// Driver returns the classpath of the driver against kafka-clients v,
// fetching and compiling it once (again when Driver.java changed).
func (j *Jars) Driver(v string) (string, error) {
	dir := filepath.Join(j.Cache, "lib", "driver-"+v)
	cp := filepath.Join(dir, "classes") + string(os.PathListSeparator) + filepath.Join(dir, "lib", "*")
	stamp := fmt.Sprintf("%x", hash(driverSource))
	if b, err := os.ReadFile(filepath.Join(dir, "done")); err == nil && string(b) == stamp {
		return cp, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "classes"), 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "lib")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(DriverPOM(v)), 0o644); err != nil {
			return "", err
		}
		if err := j.mvn(dir, "kafka-clients "+v); err != nil {
			return "", err
		}
	}
	src := filepath.Join(dir, "Driver.java")
	if err := os.WriteFile(src, driverSource, 0o644); err != nil {
		return "", err
	}
	fmt.Fprintf(j.Progress, "compiling the driver against kafka-clients %s …\n", v)
	out, err := exec.Command("javac", "-nowarn", "-d", filepath.Join(dir, "classes"), "-cp", filepath.Join(dir, "lib", "*"), src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("javac could not compile the driver against kafka-clients %s: %v\n%s", v, err, tail(string(out), 1500))
	}
	return cp, os.WriteFile(filepath.Join(dir, "done"), []byte(stamp), 0o644)
}

// hash is FNV-1a 64 (a cache stamp, not security).
func hash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

package realkafka

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// ArchiveName is a repetition's packed logs: only the lines the converter
// reads (the parsers' own patterns decide), so that a repetition can be
// committed and converted again after a converter fix (Reconvert) without
// its raw logs, which are tens of MB.
const ArchiveName = "logs.tar.gz"

// keptLine says whether Pack keeps line l of the log file name (relative to
// the repetition directory): a broker line ParseBroker reads, a client line
// ParseClient reads, a driver event.
func keptLine(name, l string) bool {
	switch {
	case strings.HasPrefix(name, "brokers/"):
		_, ok := ParseBroker(l)
		return ok
	case strings.HasSuffix(name, ".events.jsonl"):
		var d DriverEvent
		return json.Unmarshal([]byte(l), &d) == nil && d.Event != ""
	case strings.HasPrefix(name, "members/"):
		_, ok := ParseClient(l)
		return ok
	}
	return false
}

// packedFiles are the log files (relative names) the converter reads.
func packedFiles(dir string) []string {
	var names []string
	for _, pat := range []string{"brokers/broker-*.log", "members/*.log", "members/*.events.jsonl"} {
		fs, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
		for _, f := range fs {
			rel, _ := filepath.Rel(dir, f)
			rel = filepath.ToSlash(rel)
			if !strings.HasSuffix(rel, ".format.log") {
				names = append(names, rel)
			}
		}
	}
	sort.Strings(names)
	return names
}

// rawEntries are what Pack removes after packing: the raw logs, the
// configuration files and the brokers' data directories.
var rawEntries = []string{"brokers", "members", "conf", "data", "admin.log", "admin.out", "admin-*.log", "admin-*.out"}

// Pack writes dir/logs.tar.gz with the converter's lines of every log file
// (byte-for-byte reproducible: sorted, no timestamps) and, unless keepRaw,
// removes the raw logs. Convert reads the archive when the raw logs are
// absent.
func Pack(dir string, keepRaw bool) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, name := range packedFiles(dir) {
		var kept strings.Builder
		for _, l := range readLines(filepath.Join(dir, filepath.FromSlash(name))) {
			if keptLine(name, l) {
				kept.WriteString(l)
				kept.WriteByte('\n')
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(kept.Len()), Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, kept.String()); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	tmp := filepath.Join(dir, ArchiveName+".tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, ArchiveName)); err != nil {
		return err
	}
	if keepRaw {
		return nil
	}
	for _, pat := range rawEntries {
		ms, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, m := range ms {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// logSource is where Load reads a repetition's logs: its raw files, or,
// when they are gone, its archive.
type logSource struct {
	dir   string
	files map[string]string // from the archive; nil: the raw files
}

func openLogs(dir string) (*logSource, error) {
	for _, d := range []string{"brokers", "members"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			return &logSource{dir: dir}, nil
		}
	}
	f, err := os.Open(filepath.Join(dir, ArchiveName))
	if os.IsNotExist(err) {
		return &logSource{dir: dir}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ArchiveName), err)
	}
	s := &logSource{dir: dir, files: map[string]string{}}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ArchiveName), err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ArchiveName), err)
		}
		s.files[h.Name] = string(b)
	}
	return s, nil
}

// glob lists the files matching pattern (slash-separated, relative), sorted.
func (s *logSource) glob(pattern string) []string {
	var out []string
	if s.files == nil {
		fs, _ := filepath.Glob(filepath.Join(s.dir, filepath.FromSlash(pattern)))
		for _, f := range fs {
			rel, _ := filepath.Rel(s.dir, f)
			out = append(out, filepath.ToSlash(rel))
		}
	} else {
		for name := range s.files {
			if ok, _ := path.Match(pattern, name); ok {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (s *logSource) lines(name string) []string {
	if s.files == nil {
		return readLines(filepath.Join(s.dir, filepath.FromSlash(name)))
	}
	return strings.Split(s.files[name], "\n")
}

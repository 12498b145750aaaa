// Package outdir guards the output directories simrun writes (--out of
// sweep, report, merge, tune, compare and explore; two sweeps into one
// directory once interleaved their points):
//
//   - Lock: one writer at a time. A second simrun writing the same
//     directory gets a clear error instead of racing the first (two sweeps
//     into one --out failed 1 time in 13 naming a temporary file). The lock
//     is an flock(2) on DIR/.simrun.lock, released by the kernel when the
//     process ends, also after kill -9; the (empty) file stays.
//   - WriteFile: a file inside the directory is written only through real
//     directories to a regular file (or a new one): a symbolic link
//     planted inside --out (points.csv -> ~/.bashrc, .points -> /tmp/x) is
//     refused with its name, never followed. The directory itself may be
//     a link the user made.
package outdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rebalsim/rebalsim/internal/atomicfile"
)

// LockFile is the lock's name in the directory.
const LockFile = ".simrun.lock"

// Lock creates dir if needed and takes its writer lock; unlock releases it.
func Lock(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, LockFile)
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (a symbolic link?); simrun did not make it: remove it", p)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is being written by another simrun right now (it holds %s); wait for it to finish, or give another --out", dir, LockFile)
		}
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Check refuses path (inside dir) when a component below dir is a symbolic
// link or the path itself is not a regular file (or missing).
func Check(dir, path string) error { return check(dir, path, false) }

func check(dir, path string, wantDir bool) error {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == ".." {
		return nil // not inside dir: the caller's own path
	}
	cur := dir
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link inside the output directory, which simrun did not make; refusing to write through it: remove it", cur)
		case !last && !fi.IsDir():
			return fmt.Errorf("%s is not a directory; simrun did not make it: remove it", cur)
		case last && wantDir && !fi.IsDir():
			return fmt.Errorf("%s is not a directory; simrun did not make it: remove it", cur)
		case last && !wantDir && !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file; simrun did not make it: remove it", cur)
		}
	}
	return nil
}

// WriteFile writes path inside dir atomically (atomicfile.WriteFile) after
// Check.
func WriteFile(dir, path string, data []byte) error {
	if err := Check(dir, path); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}

// MkdirAll makes path (inside dir) after Check.
func MkdirAll(dir, path string) error {
	if err := check(dir, path, true); err != nil {
		return err
	}
	return os.MkdirAll(path, 0o755)
}

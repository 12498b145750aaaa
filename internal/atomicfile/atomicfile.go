// Package atomicfile writes the files a user names. A regular file (or a
// path that does not exist yet) is written so that a reader (or a resumed
// sweep) sees either the old file or the whole new one, never a torn one:
// the bytes go to a temporary file in the same directory, which is renamed
// over the path when complete. Anything else the user names is written
// into, not replaced: "-" is standard output, and a device (/dev/null,
// /dev/stdout), a FIFO or a symbolic link is opened and written as it is
// (the link followed), so that `--trace /dev/null` run as root never turns
// /dev/null into a regular file.
//
// Errors name the user's path, never the temporary file. A process killed
// while writing can leave its temporary file (".NAME.tmp-*"); the next
// write of the same path removes such leftovers.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Stdout is where the path "-" writes (a variable for tests).
var Stdout = os.Stdout

// BeforeRename, when set (tests), is called when a file's bytes are in its
// temporary file and it is about to be renamed over the path: the instant
// a kill leaves a temporary file behind.
var BeforeRename func(path string)

// File is a file being written; Commit puts it in place, Abort drops it.
type File struct {
	*os.File
	path string
	// direct is set when the path is written in place (stdout, a device, a
	// FIFO, a symlink): nothing to rename or remove.
	direct bool
	// stdout is set for "-": Commit and Abort leave it open.
	stdout bool
	done   bool
}

// tmpPrefix is the prefix of path's temporary files.
func tmpPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// IsTemp reports whether name (a base name) is one of this package's
// temporary files, for callers that clean a directory they own.
func IsTemp(name string) bool { return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") }

// pathErr names the user's path in err, whatever file the error came from.
func pathErr(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// Create starts writing path ("-" for standard output).
func Create(path string) (*File, error) {
	if path == "-" {
		return &File{File: Stdout, path: path, direct: true, stdout: true}, nil
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, pathErr("create", path, errors.New("is a directory"))
		}
		// A device, FIFO, socket or symbolic link: write into it.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, pathErr("open", path, err)
		}
		return &File{File: f, path: path, direct: true}, nil
	}
	removeLeftovers(path)
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix(path)+"*")
	if err != nil {
		return nil, pathErr("create", path, err)
	}
	return &File{File: f, path: path}, nil
}

// removeLeftovers removes the temporary files an interrupted write of path
// left behind.
func removeLeftovers(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), globEscape(tmpPrefix(path))+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// globEscape quotes the glob metacharacters of a file name.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Write writes to the file; an error names the user's path.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		err = pathErr("write", f.path, err)
	}
	return n, err
}

// WriteString writes s (see Write).
func (f *File) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// Commit closes the file and renames it over the path (mode 0644). A file
// written in place is closed (standard output is left open).
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.stdout {
		return nil
	}
	if f.direct {
		if err := f.Close(); err != nil {
			return pathErr("close", f.path, err)
		}
		return nil
	}
	tmp := f.Name()
	err := f.Close()
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil && BeforeRename != nil {
		BeforeRename(f.path)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return pathErr("write", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file; the path is untouched (a
// file written in place keeps what was written). It is safe after Commit
// (it then does nothing).
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.stdout {
		return
	}
	f.Close()
	if !f.direct {
		os.Remove(f.Name())
	}
}

// WriteFile writes data to path (atomically when path is a regular file).
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

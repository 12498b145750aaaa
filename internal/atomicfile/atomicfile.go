// Package atomicfile writes files so that a reader (or a resumed sweep)
// sees either the old file or the whole new one, never a torn one: the
// bytes go to a temporary file in the same directory, which is renamed over
// the path when complete.
package atomicfile

import (
	"os"
	"path/filepath"
)

// File is a file being written; Commit puts it in place, Abort drops it.
type File struct {
	*os.File
	path string
}

// Create starts writing path.
func Create(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Commit closes the file and renames it over the path (mode 0644).
func (f *File) Commit() error {
	tmp := f.Name()
	err := f.Close()
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Abort closes and removes the temporary file; the path is untouched. It is
// safe after Commit (it then does nothing).
func (f *File) Abort() {
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path atomically.
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

// Package embedded reads a directory of built-in YAML files compiled into
// the binary (the built-in scenarios and experiments).
package embedded

import (
	"embed"
	"path"
	"slices"
	"strings"
)

// Dir is a directory of NAME.yaml files inside an embed.FS.
type Dir struct {
	FS   embed.FS
	Path string
}

// Read returns the file of the named entry; names with a path separator
// are refused.
func (d Dir) Read(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return nil, false
	}
	b, err := d.FS.ReadFile(path.Join(d.Path, name+".yaml"))
	if err != nil {
		return nil, false
	}
	return b, true
}

// Names returns the entries' names, sorted. A missing directory is a build
// error (the embed pattern guarantees it exists), so it panics.
func (d Dir) Names() []string {
	ents, err := d.FS.ReadDir(d.Path)
	if err != nil {
		panic("embedded: directory " + d.Path + " missing: " + err.Error())
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

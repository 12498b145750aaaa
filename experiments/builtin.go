package experiments

import (
	"embed"
	"path"
	"slices"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the file of the built-in experiment of that name.
func Builtin(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return nil, false
	}
	b, err := builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
	if err != nil {
		return nil, false
	}
	return b, true
}

// BuiltinNames returns the names of the built-in experiments, sorted.
func BuiltinNames() []string {
	ents, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic("experiments: embedded builtin directory missing: " + err.Error())
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

package scenario

import (
	"embed"

	"github.com/rebalsim/rebalsim/internal/embedded"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

var builtins = embedded.Dir{FS: builtinFS, Path: "builtin"}

// Builtin returns the file of the built-in scenario of that name.
func Builtin(name string) ([]byte, bool) { return builtins.Read(name) }

// BuiltinNames returns the names of the built-in scenarios, sorted.
func BuiltinNames() []string { return builtins.Names() }

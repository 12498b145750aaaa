// Package deps pins the module's chosen dependencies while the packages that
// use them are being written, so `go mod tidy` keeps them. Delete when unused.
package deps

import (
	_ "github.com/stretchr/testify/require"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/stat"
	_ "gonum.org/v1/plot"
	_ "gopkg.in/yaml.v3"
)

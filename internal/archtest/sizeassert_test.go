package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestSizeAssertionFires proves the convention every struct-size budget in
// the project follows (a constant and an array whose length is the budget
// minus the type's size, right beside the type):
//
//	const linkSize = 16
//	var _ [linkSize - unsafe.Sizeof(link{})]struct{} // fails to compile if link grows
//
// Method: the Go compiler builds a tiny module holding one such assertion
// for a plain struct and one for a generic struct's instance: within the
// budget it compiles; one byte under the type's size, it does not, and the
// error names the assertion's line. So a budget is a compile error the day
// a field makes the type outgrow it, never a number a comment or a runtime
// test holds.
func TestSizeAssertionFires(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := func(linkBudget, dirBudget int) (string, error) {
		dir := t.TempDir()
		src := `package sizes

import "unsafe"

type link struct {
	key  uint64
	lo   uint32
	next uint32
}

const linkSize = ` + itoa(linkBudget) + `

var _ [linkSize - unsafe.Sizeof(link{})]struct{} // line 13: fails to compile if link grows

type dir[M any] struct {
	last  int64
	held  []M
	flags uint8
}

const dirSize = ` + itoa(dirBudget) + `

var _ [dirSize - unsafe.Sizeof(dir[int]{})]struct{} // line 23: fails to compile if dir grows
`
		for name, text := range map[string]string{"go.mod": "module sizes\n\ngo 1.22\n", "sizes.go": src} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(goCmd, "build", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// link is 16 bytes and dir[int] 40 on 64-bit platforms, 16 and 20 on
	// 32-bit ones: budgets of the 64-bit sizes hold on both.
	if out, err := build(16, 40); err != nil {
		t.Fatalf("within budget, the package does not compile: %v\n%s", err, out)
	}
	for _, c := range []struct {
		link, dir int
		line      string
	}{
		{15, 40, "sizes.go:13:"},
		{16, int(unsafeSizeofDirInt()) - 1, "sizes.go:23:"},
	} {
		out, err := build(c.link, c.dir)
		if err == nil {
			t.Errorf("budgets link %d, dir %d: compiled, want a compile error", c.link, c.dir)
			continue
		}
		if !strings.Contains(out, c.line) {
			t.Errorf("budgets link %d, dir %d: the error does not name %s\n%s", c.link, c.dir, c.line, out)
		}
	}
}

// unsafeSizeofDirInt is the test module's dir[int] size on this platform.
func unsafeSizeofDirInt() uintptr {
	type dir struct {
		last  int64
		held  []int
		flags uint8
	}
	return unsafe.Sizeof(dir{})
}

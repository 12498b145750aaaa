// The method budget of *Member: the coordinator's rules that read or change
// more than one part, its state transitions and its public API stay on the
// Member; every rule that reads and writes one part's state lives on that
// part (as internal/archtest budgets struct sizes, this budgets behaviour).
// Method: parse the package's non-test files and count the methods whose
// receiver is Member or *Member.
package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"
)

// memberMethodsMax is the number of methods on *Member (21 of them the
// public API: Shutdown, the application's close at the end of its processing
// step, is the 21st). A rule added to the Member that reads and writes only
// one part's state belongs on that part; raise this only for a rule of the
// coordinator itself or a new entry point, and say why in the commit.
const memberMethodsMax = 69

func TestMemberMethodBudget(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
					continue
				}
				typ := fd.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.Name == "Member" {
					names = append(names, fd.Name.Name)
				}
			}
		}
	}
	sort.Strings(names)
	if len(names) > memberMethodsMax {
		t.Fatalf("*Member has %d methods, over its budget of %d: move a rule that reads and writes one part's state onto that part (or raise memberMethodsMax for a coordinator rule, saying why); methods: %s",
			len(names), memberMethodsMax, strings.Join(names, " "))
	}
	if len(names) < memberMethodsMax {
		t.Logf("*Member has %d methods, under its budget of %d: lower memberMethodsMax to keep the gain", len(names), memberMethodsMax)
	}
}

package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fasd-db/fasd"

type pkgFile struct {
	dir  string // relative to the module root, slash-separated
	path string
	file *ast.File
	test bool
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", dir, err)
	}
	return dir
}

func parseAll(t *testing.T) []pkgFile {
	t.Helper()
	root := moduleRoot(t)
	var out []pkgFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out = append(out, pkgFile{dir: filepath.ToSlash(rel), path: p, file: f, test: strings.HasSuffix(p, "_test.go")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func under(dir, prefix string) bool {
	return dir == prefix || strings.HasPrefix(dir, prefix+"/")
}

// Ensure that imports between the module's packages follow the documented
// direction.
func TestDependencyDirection(t *testing.T) {
	// allowed[p] lists the module-internal prefixes that packages under p
	// may import (besides themselves and their own subpackages).
	rules := []struct {
		prefix  string
		allowed []string
	}{
		{"storage", nil},
		{"fasd", nil},
		{"index", []string{"storage", "internal/progress"}},
		{"query", []string{"storage", "index", "fasd", "internal/progress"}},
	}
	for _, f := range parseAll(t) {
		for _, r := range rules {
			if !under(f.dir, r.prefix) {
				continue
			}
			for _, imp := range f.file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.HasPrefix(path, module+"/") {
					continue
				}
				rel := strings.TrimPrefix(path, module+"/")
				if under(rel, r.prefix) {
					continue
				}
				ok := false
				for _, a := range r.allowed {
					if under(rel, a) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s imports %s: packages under %s/ may import only %v", f.path, rel, r.prefix, r.allowed)
				}
			}
		}
	}
}

// Ensure that library code neither exits the process nor uses a global
// random source.
func TestBannedCalls(t *testing.T) {
	root := moduleRoot(t)
	for _, f := range parseAll(t) {
		// Commands (package main) may exit; library code may not.
		if f.test || f.file.Name.Name == "main" || under(f.dir, "cmd") || under(f.dir, "internal/lint") {
			continue
		}
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "math/rand" {
				t.Errorf("%s imports math/rand: use an injected *rand.Rand from math/rand/v2", f.path)
			}
		}
		src, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		full, err := parser.ParseFile(token.NewFileSet(), f.path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(full, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := x.Name + "." + sel.Sel.Name
			switch {
			case name == "os.Exit", strings.HasPrefix(name, "log.Fatal"), strings.HasPrefix(name, "log.Panic"):
				t.Errorf("%s uses %s: library code returns errors", f.path, name)
			case x.Name == "rand" && isGlobalRandFunc(sel.Sel.Name):
				t.Errorf("%s calls rand.%s: use an injected *rand.Rand", f.path, sel.Sel.Name)
			}
			return true
		})
	}
	_ = root
}

func isGlobalRandFunc(name string) bool {
	switch name {
	case "Int", "IntN", "Intn", "Int64", "Int64N", "Int32", "Int32N", "Uint32", "Uint64", "Float32", "Float64",
		"NormFloat64", "ExpFloat64", "Perm", "Shuffle", "N", "UintN", "Uint64N", "Uint32N", "Seed", "Read":
		return true
	}
	return false
}

// Ensure that every package documents itself: a package comment, by
// convention in doc.go.
func TestPackageDocs(t *testing.T) {
	documented := map[string]bool{}
	for _, f := range parseAll(t) {
		if f.test {
			continue
		}
		if _, ok := documented[f.dir]; !ok {
			documented[f.dir] = false
		}
		if f.file.Doc != nil && strings.HasPrefix(f.file.Doc.Text(), "Package ") || f.file.Name.Name == "main" {
			documented[f.dir] = true
		}
	}
	for dir, ok := range documented {
		if !ok {
			t.Errorf("package %s has no package comment (put one in doc.go)", dir)
		}
	}
}

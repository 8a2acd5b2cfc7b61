package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
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

// rules say which module-internal prefixes the packages under prefix may
// import (besides themselves and their own subpackages): allowed in every
// file, testAllowed in addition in _test.go files. Packages under no
// prefix (cmd/fasd, internal/lint) may import anything.
var rules = []struct {
	prefix      string
	allowed     []string
	testAllowed []string
}{
	// The storage seam: interfaces, Open and the engine registry. It
	// knows nothing above it and imports no engine.
	{"storage", nil, []string{"storage/pebble", "storage/badger", "storage/postgres"}},
	// The engines: the only importers of Pebble, Badger and pgx.
	{"storage/pebble", []string{"storage"}, nil},
	{"storage/badger", []string{"storage"}, nil},
	{"storage/postgres", []string{"storage"}, nil},
	// fasd imports nothing of the module outside fasd/ (its subpackages
	// are its own).
	{"fasd", []string{"fasd/attr"}, nil},
	// The node-attribute vocabulary fasd and index share.
	{"fasd/attr", nil, nil},
	{"internal/progress", nil, nil},
	{"index", []string{"storage", "fasd/attr", "internal/progress"}, nil},
	// The engine's seam to trained models: interfaces only.
	{"query/model", []string{"fasd"}, nil},
	// Test helpers of the engine: the seam, graphs, stores.
	{"query/querytest", []string{"query/model", "fasd", "index", "storage"}, nil},
	// The engine: views over the graph, models through query/model only.
	{"query", []string{"query/model", "storage", "index", "fasd", "internal/progress"},
		[]string{"query/querytest", "runs"}},
	// Training runs and the model registry: they implement query/model and
	// do not know the engine.
	{"runs", []string{"storage", "index", "fasd", "query/model", "internal/progress"},
		[]string{"query/querytest"}},
	// The HTTP API: the engine and the graph's error values.
	{"httpapi", []string{"query", "index"}, []string{"query/querytest"}},
}

// ruleFor returns the rule of the longest prefix dir is under.
func ruleFor(dir string) (int, bool) {
	best, found := 0, false
	for i, r := range rules {
		if under(dir, r.prefix) && (!found || len(r.prefix) > len(rules[best].prefix)) {
			best, found = i, true
		}
	}
	return best, found
}

// Ensure that imports between the module's packages follow the documented
// direction.
func TestDependencyDirection(t *testing.T) {
	for _, f := range parseAll(t) {
		ri, ok := ruleFor(f.dir)
		if !ok {
			continue
		}
		r := rules[ri]
		allowed := r.allowed
		if f.test {
			allowed = append(append([]string(nil), allowed...), r.testAllowed...)
		}
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(path, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(path, module+"/")
			// A package's own subpackages are its own, unless they have a
			// rule of their own (query may not import query/querytest
			// outside tests).
			if j, own := ruleFor(rel); under(rel, r.prefix) && (!own || j == ri) {
				continue
			}
			ok := false
			for _, a := range allowed {
				if under(rel, a) {
					if j, own := ruleFor(rel); !own || under(rules[j].prefix, a) {
						ok = true
					}
				}
			}
			if !ok {
				t.Errorf("%s imports %s: packages under %s/ may import only %v", f.path, rel, r.prefix, allowed)
			}
		}
	}
}

// backendPkgs are the storage engines: linked by the CLI and by tests,
// never by a library package above the seam.
var backendPkgs = []string{"storage/pebble", "storage/badger", "storage/postgres"}

// Ensure that no library package imports a storage engine: outside the
// commands, the storage tree itself and test code (including the test
// helper package querytest), stores are opened through storage.Open on
// whichever engines the program links.
func TestBackendsLinkedOnlyByPrograms(t *testing.T) {
	for _, f := range parseAll(t) {
		if f.test || under(f.dir, "cmd") || under(f.dir, "storage") || under(f.dir, "query/querytest") {
			continue
		}
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range backendPkgs {
				if path == module+"/"+b {
					t.Errorf("%s imports %s: only programs (cmd/) and tests link a storage engine", f.path, b)
				}
			}
		}
	}
}

// engineModules maps each storage engine's third-party module to the one
// package of this module that may import it.
var engineModules = map[string]string{
	"github.com/cockroachdb/pebble/v2": "storage/pebble",
	"github.com/dgraph-io/badger/v4":   "storage/badger",
	"github.com/jackc/pgx/v5":          "storage/postgres",
}

// Ensure that each engine's module (and its subpackages) is imported only
// by that engine's package, test files included: everything else reaches
// an engine through storage.Open.
func TestEngineModulesImportedOnlyByTheirPackage(t *testing.T) {
	for _, f := range parseAll(t) {
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for mod, pkg := range engineModules {
				if (path == mod || strings.HasPrefix(path, mod+"/")) && f.dir != pkg {
					t.Errorf("%s imports %s: only %s may", f.path, path, pkg)
				}
			}
		}
	}
}

// Ensure, transitively over the module's own packages, that the engine
// does not reach the training code or the HTTP API, and that the seam and
// the training code do not reach the engine.
func TestTransitiveImports(t *testing.T) {
	deps := map[string][]string{} // module package → its imports (non-test files)
	for _, f := range parseAll(t) {
		if f.test {
			continue
		}
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			deps[f.dir] = append(deps[f.dir], path)
		}
	}
	closure := func(pkg string) map[string]string { // import path → the module package importing it
		seen := map[string]string{}
		stack := []string{pkg}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, imp := range deps[p] {
				if _, ok := seen[imp]; ok {
					continue
				}
				seen[imp] = p
				if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
					stack = append(stack, rel)
				}
			}
		}
		return seen
	}
	for _, c := range []struct {
		pkg       string
		forbidden []string
	}{
		{"query", []string{module + "/fasd/pipeline", module + "/runs", module + "/httpapi"}},
		{"query/model", []string{module + "/query", module + "/index", module + "/storage"}},
		{"runs", []string{module + "/query", module + "/httpapi"}},
		{"index", []string{module + "/fasd"}},
	} {
		if _, ok := deps[c.pkg]; !ok {
			t.Errorf("package %s not found", c.pkg)
			continue
		}
		for imp, by := range closure(c.pkg) {
			for _, bad := range c.forbidden {
				if imp == bad {
					t.Errorf("%s reaches %s (imported by %s)", c.pkg, imp, by)
				}
			}
		}
	}
}

// Ensure, over the full dependency graph (third-party and standard
// packages included, as go list -deps shows it), that the library packages
// below the HTTP API reach neither net/http nor a storage engine: the
// engines (Pebble's error reporting and Badger's expvar metrics reach
// net/http) are linked only by programs.
func TestNoNetworkingBelowHTTPAPI(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	pkgs := []string{"./query", "./query/model", "./index", "./storage", "./runs", "./fasd/..."}
	cmd := exec.Command(goBin, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"net/http", "expvar", "github.com/cockroachdb/pebble/v2", "github.com/dgraph-io/badger/v4", "github.com/jackc/pgx/v5"}
	for _, b := range backendPkgs {
		forbidden = append(forbidden, module+"/"+b)
	}
	listed := 0
	for _, dep := range strings.Fields(string(out)) {
		listed++
		for _, bad := range forbidden {
			if dep == bad {
				t.Errorf("%v reach %s (go list -deps %s)", pkgs, dep, strings.Join(pkgs, " "))
			}
		}
	}
	if listed < 20 {
		t.Fatalf("go list -deps listed only %d packages", listed)
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

package main

// The commands quoted in the reference documents must still run: every
// `fasd SUBCOMMAND --flag …`, `go test -bench NAME ./pkg` and `make TARGET`
// in README.md, BENCHMARKS.md, RESULTS.md and docs/results/studies.md, in code blocks (indented or
// fenced, with `$ ` prompts, `\` continuations, `#` comments and `&&`,
// `;`, `|` chains) and in inline code spans, is parsed without being run:
//
//   - fasd: the subcommand exists in command.NewRoot and every flag is one
//     of its flags (local or inherited) and not hidden (an old spelling); a
//     flag's value is set through the flag's own parser unless it is a
//     placeholder in capitals (DIR, N);
//   - go test: the package directories exist and the top level of -bench
//     names at least one Benchmark function declared in them;
//   - go build/run/vet of a local package: the directory exists;
//   - make: every target is a rule of the Makefile.
//
// Other programs (wrk, curl, …) are not checked. The journals under
// docs/history keep the commands of their time and are not checked.

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/cmd/fasd/command"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot is the module root, seen from this package's directory.
const repoRoot = "../.."

// docFiles are the documents whose commands must stay true.
var docFiles = []string{"README.md", "BENCHMARKS.md", "RESULTS.md", "docs/results/studies.md"}

func TestDocumentedCommandsParse(t *testing.T) {
	c := newDocChecker(repoRoot)
	checked := 0
	for _, name := range docFiles {
		b, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range quotedCommands(string(b)) {
			n, err := c.check(q.text)
			checked += n
			if err != nil {
				t.Errorf("%s:%d: %s\n\t%v", name, q.line, q.text, err)
			}
		}
	}
	t.Logf("%d commands checked in %v", checked, docFiles)
	// A document reformatted so that no command is found any more must not
	// pass as "every command parses".
	if checked < 20 {
		t.Errorf("only %d commands found in %v: is the extraction broken?", checked, docFiles)
	}
}

func TestDocChecker(t *testing.T) {
	c := newDocChecker(repoRoot)
	for _, tc := range []struct {
		cmd  string
		want string // "" for no error, else a substring of the error
	}{
		{"fasd train --db NBA --seed 0 --no-save", ""},
		{"bin/fasd load --db /tmp/db --dataset nba --dir ../shared/datasets/nba", ""},
		{"/usr/bin/time -v nice -n 10 fasd train --db X --max-memory 1GiB --max-time 30m", ""},
		{"fasd eval --db D --seeds N --retune 'debias.reverse=sde,debias.guide_weight=0'", ""},
		{"fasd gen --out D && fasd load --db DB --dataset synth --dir D", ""},
		{"fasd --help", ""},
		{"fasd train --made-up-flag 3", `unknown flag --made-up-flag`},
		{"fasd gen --out D && fasd load --db DB --no-such", `unknown flag --no-such`},
		{"fasd trian --db X", `unknown subcommand "trian"`},
		{"fasd load --db X --preset nba", `--preset is hidden`},
		{"fasd train --seed minus-one", `invalid value "minus-one" for --seed`},
		{"fasd train --db", `needs a value`},
		{"FASD_BENCH_LARGE=1 go test ./index/ -run '^$' -bench 'Sample|Ball2' -benchmem", ""},
		{"go test -run '^$' -bench 'PredictCached' ./query/", ""},
		{"go test -run '^$' -bench 'PredictWarm' ./query/", `no benchmark matches "PredictWarm"`},
		{"go test -bench . ./no/such/pkg", `no package directory`},
		{"go test -benchtme 3x -bench . ./query/", `unknown go test flag -benchtme`},
		{"make test", ""},
		{"make demo DEMO_DIR=/tmp/d", ""},
		{"make tset", `no make target "tset"`},
		{"wrk -t1 -c32 http://127.0.0.1:8080/", ""},
	} {
		_, err := c.check(tc.cmd)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.cmd, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: no error, want one containing %q", tc.cmd, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: error %v, want one containing %q", tc.cmd, err, tc.want)
		}
	}
}

func TestQuotedCommands(t *testing.T) {
	doc := "Intro `fasd stats --db D` and `--size small`.\n" +
		"\n" +
		"    make build                  # → bin/fasd\n" +
		"    $ fasd load --db /tmp/mine --nodes people.csv \\\n" +
		"        --id-col person_id\n" +
		"    loaded dump (people.csv) into /tmp/mine\n" +
		"\n" +
		"```sh\n" +
		"go test -run '^$' -bench 'Load' ./index/\n" +
		"```\n" +
		"\n" +
		"| a | `FASD_BENCH_LARGE=1 go test -bench 'Sample\\|Ball2' ./index/` |\n"
	var got []string
	for _, q := range quotedCommands(doc) {
		got = append(got, q.text)
	}
	want := []string{
		"fasd stats --db D",
		"--size small",
		"make build                  # → bin/fasd",
		"fasd load --db /tmp/mine --nodes people.csv --id-col person_id",
		"loaded dump (people.csv) into /tmp/mine",
		"go test -run '^$' -bench 'Load' ./index/",
		"FASD_BENCH_LARGE=1 go test -bench 'Sample|Ball2' ./index/",
	}
	if !slices.Equal(got, want) {
		t.Errorf("quotedCommands:\n got %q\nwant %q", got, want)
	}
}

// quoted is one command line as a document shows it.
type quoted struct {
	line int // 1-based line of the document where it starts
	text string
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// quotedCommands returns the lines of the document's code blocks (indented
// by four spaces or a tab, or fenced by ```), continuations joined and a
// leading "$ " prompt removed, and its inline code spans (in tables, an
// escaped \| is a |).
func quotedCommands(doc string) []quoted {
	var out []quoted
	lines := strings.Split(doc, "\n")
	fenced := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		indented := strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t")
		if !fenced && !indented {
			for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
				out = append(out, quoted{i + 1, strings.ReplaceAll(m[1], `\|`, "|")})
			}
			continue
		}
		start := i
		text := strings.TrimSpace(l)
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSpace(strings.TrimSuffix(text, `\`)) + " " + strings.TrimSpace(lines[i])
		}
		text = strings.TrimPrefix(text, "$ ")
		if text != "" {
			out = append(out, quoted{start + 1, text})
		}
	}
	return out
}

// docChecker checks command lines against the repository at root.
type docChecker struct {
	root    string
	targets map[string]bool       // make targets
	benches map[string][]string   // package dir → Benchmark function names
	errs    map[string]error      // package dir → error reading it
	newRoot func() *cobra.Command // a fresh fasd root command
}

func newDocChecker(root string) *docChecker {
	return &docChecker{
		root:    root,
		benches: map[string][]string{},
		errs:    map[string]error{},
		newRoot: func() *cobra.Command { return command.NewRoot(io.Discard, io.Discard) },
	}
}

// check checks every command of one quoted line and returns how many it
// recognised (fasd, go, make) and the first error.
func (c *docChecker) check(line string) (int, error) {
	words, err := shellWords(line)
	if err != nil {
		if f := stripWrappers(strings.Fields(line)); len(f) > 0 && isChecked(f[0]) {
			return 1, err
		}
		return 0, nil // prose or program output, not a command
	}
	n := 0
	for _, cmd := range words {
		cmd = stripWrappers(cmd)
		if len(cmd) == 0 {
			continue
		}
		var err error
		switch {
		case isFasd(cmd[0]):
			err = c.checkFasd(cmd[1:])
		case cmd[0] == "go" && len(cmd) > 1:
			err = c.checkGo(cmd[1], cmd[2:])
		case cmd[0] == "make":
			err = c.checkMake(cmd[1:])
		default:
			continue
		}
		n++
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// isFasd reports whether a command word runs the fasd binary (fasd,
// bin/fasd), as opposed to naming its source directory (cmd/fasd).
func isFasd(w string) bool { return w == "fasd" || strings.HasSuffix(w, "bin/fasd") }

// isChecked reports whether check knows the program w.
func isChecked(w string) bool { return isFasd(w) || w == "go" || w == "make" }

// shellWords splits a command line into simple commands (at &&, ||, |,
// ; and &) of words, with quotes removed, redirections and comments
// dropped.
func shellWords(line string) ([][]string, error) {
	var (
		cmds [][]string
		cur  []string
		word strings.Builder
		in   bool // a word is being built
		skip bool // the next word is a redirection target
	)
	endWord := func() {
		if in {
			if skip {
				skip = false
			} else {
				cur = append(cur, word.String())
			}
		}
		word.Reset()
		in = false
	}
	endCmd := func() {
		endWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(line[i+1:], ch)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c quote", ch)
			}
			word.WriteString(line[i+1 : i+1+j])
			in = true
			i += j + 1
		case ch == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			in = true
		case ch == ' ' || ch == '\t':
			endWord()
		case ch == '#' && !in:
			endCmd()
			return cmds, nil
		case ch == '&' || ch == '|' || ch == ';':
			endCmd()
		case ch == '>' || ch == '<':
			endWord()
			if i+1 < len(line) && line[i+1] == '&' { // 2>&1
				i++
				for i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9' {
					i++
				}
				continue
			}
			skip = true
		default:
			word.WriteByte(ch)
			in = true
		}
	}
	endCmd()
	return cmds, nil
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// stripWrappers drops leading environment assignments and the programs
// that only run another one (time, nice, env).
func stripWrappers(cmd []string) []string {
	for len(cmd) > 0 {
		switch w := cmd[0]; {
		case envAssign.MatchString(w), w == "env":
			cmd = cmd[1:]
		case w == "time" || w == "/usr/bin/time":
			cmd = cmd[1:]
			for len(cmd) > 0 && strings.HasPrefix(cmd[0], "-") {
				cmd = cmd[1:]
			}
		case w == "nice":
			cmd = cmd[1:]
			if len(cmd) > 1 && cmd[0] == "-n" {
				cmd = cmd[2:]
			} else if len(cmd) > 0 && strings.HasPrefix(cmd[0], "-") {
				cmd = cmd[1:]
			}
		default:
			return cmd
		}
	}
	return cmd
}

// placeholder is a value a document writes in place of a real one.
var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$|^…$|^\.\.\.$`)

// checkFasd finds the subcommand of args in a fresh fasd root command and
// parses its flags with the command's own flag set.
func (c *docChecker) checkFasd(args []string) error {
	root := c.newRoot()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				return fmt.Errorf("unknown subcommand %q", a)
			}
		}
	}
	var positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		if strings.HasPrefix(a, "--") {
			f = lookupFlag(cmd, name)
		} else if len(name) == 1 {
			f = lookupShorthand(cmd, name)
		}
		if f == nil {
			return fmt.Errorf("fasd %s: unknown flag %s", cmd.Name(), a)
		}
		if f.Hidden {
			return fmt.Errorf("fasd %s: %s is hidden from --help (an old spelling): quote the current one", cmd.Name(), a)
		}
		if !hasVal && f.NoOptDefVal == "" {
			if i+1 >= len(rest) {
				return fmt.Errorf("fasd %s: flag --%s needs a value", cmd.Name(), f.Name)
			}
			i++
			val, hasVal = rest[i], true
		}
		if hasVal && !placeholder.MatchString(val) {
			if err := f.Value.Set(val); err != nil {
				return fmt.Errorf("fasd %s: invalid value %q for --%s: %w", cmd.Name(), val, f.Name, err)
			}
		}
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, positional); err != nil {
			return fmt.Errorf("fasd %s: %w", cmd.Name(), err)
		}
	}
	return nil
}

func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	if name == "help" {
		return &pflag.Flag{Name: "help", NoOptDefVal: "true", Value: newBoolValue()}
	}
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}

func lookupShorthand(cmd *cobra.Command, s string) *pflag.Flag {
	if s == "h" {
		return lookupFlag(cmd, "help")
	}
	if f := cmd.Flags().ShorthandLookup(s); f != nil {
		return f
	}
	return cmd.InheritedFlags().ShorthandLookup(s)
}

func newBoolValue() pflag.Value {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.Bool("b", false, "")
	return fs.Lookup("b").Value
}

// goTestValueFlags are the go test flags that take a value; goTestBoolFlags
// those that do not.
var (
	goTestValueFlags = strings.Fields("run bench benchtime count timeout tags cpu cpuprofile memprofile blockprofile mutexprofile coverprofile o p list fuzz fuzztime exec covermode coverpkg trace outputdir")
	goTestBoolFlags  = strings.Fields("v race short benchmem c cover json failfast x n a i")
)

// checkGo checks `go test` (packages and -bench) and the package argument
// of `go build`, `go run` and `go vet`.
func (c *docChecker) checkGo(sub string, args []string) error {
	switch sub {
	case "test", "build", "run", "vet":
	default:
		return nil
	}
	var bench string
	var pkgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			if sub == "run" { // the rest are the program's arguments
				break
			}
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case slices.Contains(goTestBoolFlags, name):
		case slices.Contains(goTestValueFlags, name) || (sub != "test" && name == "ldflags"):
			if !hasVal {
				if i+1 >= len(args) {
					return fmt.Errorf("go %s: flag -%s needs a value", sub, name)
				}
				i++
				val = args[i]
			}
			if name == "bench" {
				bench = val
			}
		default:
			return fmt.Errorf("unknown go %s flag %s", sub, a)
		}
	}
	var dirs []string
	for _, p := range pkgs {
		if !strings.HasPrefix(p, ".") { // a module path, e.g. tool@version
			continue
		}
		d, all := strings.CutSuffix(p, "/...")
		d = filepath.Join(c.root, d)
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("go %s: no package directory %s", sub, p)
		}
		if all {
			err := filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
				if err == nil && e.IsDir() {
					dirs = append(dirs, path)
				}
				return err
			})
			if err != nil {
				return err
			}
		} else {
			dirs = append(dirs, d)
		}
	}
	if sub != "test" || bench == "" {
		return nil
	}
	if len(pkgs) == 0 {
		dirs = append(dirs, c.root) // go test in the current directory
	}
	top, _, _ := strings.Cut(bench, "/")
	re, err := regexp.Compile(top)
	if err != nil {
		return fmt.Errorf("go test: -bench %q: %w", bench, err)
	}
	for _, d := range dirs {
		names, err := c.benchmarks(d)
		if err != nil {
			return err
		}
		for _, n := range names {
			if re.MatchString(n) {
				return nil
			}
		}
	}
	return fmt.Errorf("go test: no benchmark matches %q in %v", bench, pkgs)
}

// benchmarks returns the Benchmark functions declared in the test files of
// directory dir.
func (c *docChecker) benchmarks(dir string) ([]string, error) {
	if names, ok := c.benches[dir]; ok {
		return names, c.errs[dir]
	}
	var names []string
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	fset := token.NewFileSet()
	for _, f := range files {
		if err != nil {
			break
		}
		var af *ast.File
		af, err = parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			break
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Benchmark") {
				names = append(names, fd.Name.Name)
			}
		}
	}
	c.benches[dir], c.errs[dir] = names, err
	return names, err
}

var makeRule = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+)\s*:([^=]|$)`)

// checkMake checks that every target named is a rule of the Makefile.
func (c *docChecker) checkMake(args []string) error {
	if c.targets == nil {
		b, err := os.ReadFile(filepath.Join(c.root, "Makefile"))
		if err != nil {
			return err
		}
		c.targets = map[string]bool{}
		for _, m := range makeRule.FindAllStringSubmatch(string(b), -1) {
			c.targets[m[1]] = true
		}
		if len(c.targets) == 0 {
			return errors.New("no rule found in the Makefile")
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			continue
		}
		if !c.targets[a] {
			return fmt.Errorf("no make target %q", a)
		}
	}
	return nil
}

// Package lint holds the project's lint rules as ordinary Go tests, so that
// `go test ./...` enforces them without extra tools:
//
//   - the dependency direction between packages (cmd/fasd → query →
//     {index → storage, fasd}; fasd imports no other package of the module;
//     storage imports nothing of index, fasd or query);
//   - library code never calls log.Fatal*, os.Exit or uses the global
//     math/rand source (randomness is injected as *rand.Rand);
//   - every package has a package comment (by convention in doc.go).
package lint

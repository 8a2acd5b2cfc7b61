// Package lint holds the project's lint rules as ordinary Go tests, so that
// `go test ./...` enforces them without extra tools:
//
//   - the dependency direction between packages (cmd/fasd → {httpapi →
//     query, runs}; query → {query/model, index → storage, fasd}; runs →
//     {query/model, index, fasd}; fasd imports no other package of the
//     module; storage imports nothing of the module), per file, and
//     transitively over the module's packages for the engine (no net/http,
//     no training code), the model seam and the training runs;
//   - library code never calls log.Fatal*, os.Exit or uses the global
//     math/rand source (randomness is injected as *rand.Rand);
//   - every package has a package comment (by convention in doc.go).
package lint

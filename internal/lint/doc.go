// Package lint holds the project's lint rules as ordinary Go tests, so that
// `go test ./...` enforces them without extra tools:
//
//   - the dependency direction between packages (cmd/fasd → {httpapi →
//     query, runs}; query → {query/model, index → storage, fasd}; runs →
//     {query/model, index, fasd}; fasd imports no other package of the
//     module; storage imports nothing of the module; only storage/pebble,
//     storage/badger and storage/postgres import the engines (Pebble,
//     Badger, pgx), and only programs and tests import
//     them), per file, and transitively over the module's packages for the
//     engine (no training code), the model seam and the training runs;
//   - over the full dependency graph (go list -deps, third-party included):
//     query, query/model, index, storage, runs and fasd/... reach neither
//     net/http nor a storage engine;
//   - library code never calls log.Fatal*, os.Exit or uses the global
//     math/rand source (randomness is injected as *rand.Rand);
//   - every package has a package comment (by convention in doc.go).
package lint

package query

import "github.com/fasd-db/fasd/storage"

// ErrWriteFault is storage.ErrFault, for the layers above that do not
// import package storage (the HTTP API answers it 507): the store met a
// full disk or an I/O error and refuses writes until it is reopened;
// reads go on.
var ErrWriteFault = storage.ErrFault

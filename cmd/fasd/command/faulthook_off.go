//go:build !crashtest

package command

import (
	"context"
	"io"

	"github.com/fasd-db/fasd/storage"
)

// storageOptions is the I/O-fault hook of faulthook.go, compiled out: a
// build without the crashtest tag returns o unchanged and reads no
// environment variable.
func storageOptions(ctx context.Context, o *storage.Options) *storage.Options {
	return withCacheOf(ctx, o)
}

// FaultHookReport does nothing without the crashtest tag.
func FaultHookReport(io.Writer) {}

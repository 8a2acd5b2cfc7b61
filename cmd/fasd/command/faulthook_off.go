//go:build !crashtest

package command

import (
	"io"

	"github.com/fasd-db/fasd/storage"
)

// storageOptions is the I/O-fault hook of faulthook.go, compiled out: a
// build without the crashtest tag returns o unchanged and reads no
// environment variable.
func storageOptions(o *storage.Options) *storage.Options { return o }

// FaultHookReport does nothing without the crashtest tag.
func FaultHookReport(io.Writer) {}

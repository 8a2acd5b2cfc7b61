package runs

import (
	"errors"
	"os"
	"runtime"

	"github.com/fasd-db/fasd/fasd/pipeline"
)

// TempScratch returns a pipeline.Options.Scratch that keeps each scratch in
// a new temporary file in dir ("" means os.TempDir()). The file is gone
// once the scratch is closed; on Unix-like systems its name is removed as
// soon as it is created, so nothing is left behind even if the process
// dies. Its pages live in the operating system's page cache, not in the
// process's resident memory.
func TempScratch(dir string) func() (pipeline.Scratch, error) {
	return func() (pipeline.Scratch, error) {
		f, err := os.CreateTemp(dir, "fasd-scratch-*")
		if err != nil {
			return nil, err
		}
		t := &tempFile{File: f}
		if runtime.GOOS != "windows" {
			if err := os.Remove(f.Name()); err != nil {
				return nil, errors.Join(err, f.Close())
			}
			t.removed = true
		}
		return t, nil
	}
}

type tempFile struct {
	*os.File
	removed bool
}

// Close closes the file and removes it if it still has a name.
func (t *tempFile) Close() error {
	err := t.File.Close()
	if !t.removed {
		err = errors.Join(err, os.Remove(t.Name()))
		t.removed = true
	}
	return err
}

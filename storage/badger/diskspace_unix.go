//go:build unix

package badger

import "golang.org/x/sys/unix"

// freeBytes returns the bytes available to an unprivileged user on the
// file system of dir, and whether it could tell.
func freeBytes(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}

//go:build unix

package store

import (
	"os"
	"syscall"
)

// lockTemp takes an exclusive lock on a temporary file being written. A
// file system without locks leaves it unlocked; removeIfUnlocked then
// cannot lock it either and keeps it, since its lock fails the same way.
func lockTemp(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// removeIfUnlocked removes the file at p if its lock can be taken, that
// is, if no living process is writing it.
func removeIfUnlocked(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	return os.Remove(p) == nil
}

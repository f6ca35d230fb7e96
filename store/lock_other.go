//go:build !unix

package store

import "os"

// lockTemp does nothing where flock is not available.
func lockTemp(*os.File) {}

// removeIfUnlocked cannot tell a dead writer's file from a live one
// without locks, so it keeps every file.
func removeIfUnlocked(string) bool { return false }

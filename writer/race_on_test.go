//go:build race

package writer

// raceEnabled: the race detector makes sync.Pool drop what it is given
// back at random, so allocation counts do not show steady state.
const raceEnabled = true

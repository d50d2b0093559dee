//go:build race

package archive_test

// raceEnabled: the race detector is on. It makes allocations larger (its shadow state
// moves values to the heap), so the allocation bounds of the parse tests double.
const raceEnabled = true

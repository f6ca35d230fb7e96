package maintain

// NewRecyclingAllocator is the allocator a pass uses by default, for the
// tests of the package maintain_test to check it (wrapped in a
// memory.CheckedAllocator) under every compaction they run.
var NewRecyclingAllocator = newRecyclingAllocator

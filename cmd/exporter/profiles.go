package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
)

// profileFlags are the Go profiles a command writes of itself.
type profileFlags struct {
	CPUProfile string `name:"cpu-profile" help:"Write a Go CPU profile of the whole command to this file (for go tool pprof)." type:"path"`
	MemProfile string `name:"mem-profile" help:"Write a Go allocation profile of the whole command to this file when it ends (for go tool pprof -sample_index=alloc_space)." type:"path"`
}

// start starts the CPU profile; stop ends it and writes the allocation
// profile.
func (p profileFlags) start(logger *slog.Logger) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	if p.CPUProfile != "" {
		f, err := os.Create(p.CPUProfile)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("--cpu-profile: %w", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if p.MemProfile != "" {
		f, err := os.Create(p.MemProfile)
		if err != nil {
			stop()
			return nil, fmt.Errorf("--mem-profile: %w", err)
		}
		stops = append(stops, func() {
			if err := errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close()); err != nil {
				logger.Error("cannot write the allocation profile", "file", p.MemProfile, "error", err)
			}
		})
	}
	return stop, nil
}

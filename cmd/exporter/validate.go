package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
	"go.yaml.in/yaml/v3"
)

type validateCmd struct{}

// run checks a config file for `exporter run` and reports every problem
// at once, each with its key: unknown keys, values of the wrong form, and
// settings that do not work together.
func (v *validateCmd) run(path string, stdout, stderr io.Writer) int {
	if path == "" {
		fmt.Fprintln(stderr, "exporter validate: give the file with --config FILE")
		return exitUsage
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "exporter validate:", err)
		return exitUsage
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		fmt.Fprintf(stderr, "%s: not YAML: %v\n", path, err)
		return exitUsage
	}
	norm := map[string]any{}
	for k, val := range values {
		norm[strings.ReplaceAll(k, "_", "-")] = val
	}
	known := map[string]bool{}
	var probe cli
	if p, err := newParser(&probe, io.Discard, io.Discard, func(int) {}); err == nil {
		for _, f := range p.Model.Node.Children[0].Flags {
			known[f.Name] = true
		}
	}
	var problems []string
	keys := make([]string, 0, len(norm))
	for k := range norm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	good := map[string]any{}
	for _, k := range keys {
		if !known[k] {
			problems = append(problems, fmt.Sprintf("%s: unknown key (keys are the long flag names of exporter run)", k))
			continue
		}
		// Each key alone, so that one bad value does not hide the next.
		one := map[string]any{k: norm[k]}
		if k != "source" {
			one["source"] = "stdin"
		}
		var c cli
		p, _ := newParser(&c, io.Discard, io.Discard, func(int) {}, kong.Resolvers(&yamlConfig{values: one}))
		if _, err := p.Parse([]string{"run"}); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		good[k] = norm[k]
	}
	if _, ok := norm["source"]; !ok {
		problems = append(problems, "source: missing: "+missingSource)
	}
	// Then the keys that are well-formed on their own, together: settings
	// that do not work together, files that do not exist, bad hints.
	if _, ok := good["source"]; !ok {
		good["source"] = "stdin"
	}
	{
		var c cli
		p, _ := newParser(&c, io.Discard, io.Discard, func(int) {}, kong.Resolvers(&yamlConfig{values: good}))
		if _, err := p.Parse([]string{"run"}); err != nil {
			problems = append(problems, err.Error())
		} else if _, _, err := c.Run.pipelineConfig(nil, slog.New(slog.DiscardHandler)); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				line = strings.TrimSpace(line)
				problems = append(problems, strings.TrimPrefix(line, "--"))
			}
		}
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "%s: %d problem(s)\n", path, len(problems))
		for _, pr := range problems {
			fmt.Fprintln(stderr, "  "+pr)
		}
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: OK\n", path)
	return exitOK
}

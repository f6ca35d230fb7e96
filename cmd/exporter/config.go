package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
	"go.yaml.in/yaml/v3"
)

// yamlConfig resolves flags from a YAML file whose keys are the flags' long
// names (kebab-case; snake_case also accepted). Unknown keys are errors,
// all reported at once, so a typo never silently falls back to a default.
type yamlConfig struct {
	values map[string]any
}

func loadYAMLConfig(r io.Reader) (kong.Resolver, error) {
	values, err := readConfigValues(r)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	return &yamlConfig{values: values}, nil
}

// readConfigValues reads a config file's keys, snake_case made kebab-case.
func readConfigValues(r io.Reader) (map[string]any, error) {
	var values map[string]any
	if err := yaml.NewDecoder(r).Decode(&values); err != nil && err != io.EOF {
		return nil, err
	}
	norm := map[string]any{}
	for k, v := range values {
		norm[strings.ReplaceAll(k, "_", "-")] = v
	}
	return norm, nil
}

func (c *yamlConfig) Validate(app *kong.Application) error {
	known := flagNames(app.Node)
	var unknown []string
	for k := range c.values {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		return fmt.Errorf("config file: unknown keys %s (keys are the long flag names, see exporter run --help)", strings.Join(unknown, ", "))
	}
	return nil
}

func (c *yamlConfig) Resolve(_ *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
	v, ok := c.values[flag.Name]
	if !ok {
		return nil, nil
	}
	for _, env := range flag.Envs {
		if _, set := os.LookupEnv(env); set {
			// kong applies a flag's environment variable as its default,
			// before resolvers; the environment must win over the file.
			return nil, nil
		}
	}
	switch t := v.(type) {
	case map[string]any:
		// map flags take "k=v" pairs; YAML gives a mapping
		parts := make([]string, 0, len(t))
		for k, val := range t {
			parts = append(parts, fmt.Sprintf("%s=%v", k, val))
		}
		sort.Strings(parts)
		return strings.Join(parts, ";"), nil
	case []any:
		parts := make([]string, 0, len(t))
		for _, val := range t {
			parts = append(parts, fmt.Sprint(val))
		}
		return strings.Join(parts, ","), nil
	}
	return fmt.Sprint(v), nil
}

// flagNames is the long name of every flag of n and of its commands: the
// keys a config file may hold.
func flagNames(n *kong.Node) map[string]bool {
	names := map[string]bool{}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, f := range n.Flags {
			names[f.Name] = true
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(n)
	return names
}

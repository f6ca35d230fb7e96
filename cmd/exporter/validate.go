package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

type validateCmd struct{}

const validateUsage = `Usage: exporter validate [--config FILE] [RUN FLAGS...]

Check the configuration exporter run would use: the config file (--config FILE,
or EXPORTER_CONFIG), the EXPORTER_* environment variables and the run flags
given here, with run's precedence (flag, environment, file, default). Every
problem is reported at once, under the config key, environment variable or
flag it comes from. Exit 0 when all is well, 2 otherwise.`

// validateArgs tells a validate command line, with --config before or
// after the command, and returns its arguments without the command.
func validateArgs(args []string) ([]string, bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--config":
			i++
		case strings.HasPrefix(a, "--config="):
		case a == "validate":
			return append(slices.Clone(args[:i]), args[i+1:]...), true
		default:
			return nil, false
		}
	}
	return nil, false
}

// setting is one place a value of the configuration comes from: a key of
// the config file, an environment variable or a flag given to validate.
type setting struct {
	name  string   // as reported: "key", "EXPORTER_KEY" or "--key"
	flag  string   // the flag of run it sets; "" for an unknown flag or an argument
	key   bool     // a config key
	value any      // the key's value
	env   bool     // an environment variable, named name
	args  []string // a flag and its value
	good  bool     // it parses alone
}

// run checks the configuration `exporter run` would load from the same
// config file, environment and flags, and reports every problem at once,
// each under its key, variable or flag: unknown keys and flags, values of
// the wrong form, and settings that do not work together. args are
// validate's arguments: --config FILE and run's flags.
func (v *validateCmd) run(args []string, stdout, stderr io.Writer) int {
	var probe cli
	p, err := newParser(&probe, io.Discard, io.Discard, func(int) {})
	if err != nil {
		printErr(stderr, "exporter validate:", err)
		return exitFailure
	}
	runNode := commandNode(p.Model.Node, "run")
	path, from := "", ""
	var flags []flagArg
	for _, g := range flagGroups(p.Model.Node, runNode, args) {
		switch {
		case g.flag != nil && g.flag.Name == "help":
			fmt.Fprintln(stdout, validateUsage)
			return exitOK
		case g.flag != nil && g.flag.Name == "config" && len(g.args) == 2:
			path, from = g.args[1], "--config"
			continue
		case g.flag != nil && g.flag.Name == "config" && strings.HasPrefix(g.args[0], "--config="):
			path, from = strings.TrimPrefix(g.args[0], "--config="), "--config"
			continue
		}
		flags = append(flags, g)
	}
	if env, ok := os.LookupEnv("EXPORTER_CONFIG"); ok && from == "" {
		path, from = env, "EXPORTER_CONFIG" // run fails on an empty one too
	}
	var file map[string]any
	if from != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			printErrf(stderr, "exporter validate: config file from %s: %v\n", from, err)
			return exitUsage
		}
		if file, err = readConfigValues(bytes.NewReader(data)); err != nil {
			printErrf(stderr, "%s: not YAML: %v\n", path, err)
			return exitUsage
		}
	}

	settings, problems := collectSettings(p.Model.Node, runNode, file, flags)
	// Each setting alone, so that one bad value does not hide the next
	// and is reported under its own name only.
	for _, s := range settings {
		values := map[string]any{}
		if s.key {
			values[s.flag] = s.value
		}
		if s.flag != "source" {
			values["source"] = "stdin" // run needs one; it is checked apart
		}
		var env []string
		if s.env {
			env = []string{s.name}
		}
		if _, err := parseRun(values, env, s.args); err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, s.name+":") && !strings.HasPrefix(msg, s.name+" ") {
				msg = s.name + ": " + msg // kong names a flag, not a key or variable
			}
			problems = append(problems, msg)
			continue
		}
		s.good = true
	}
	problems = append(problems, checkTogether(settings)...)

	label := path
	if from == "" {
		label = "the environment and flags (no config file)"
	}
	if len(problems) > 0 {
		printErrf(stderr, "%s: %d problem(s)\n", label, len(problems))
		for _, pr := range problems {
			printErr(stderr, "  "+strings.ReplaceAll(pr, "\n", "\n  "))
		}
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: OK\n", forPeople(label, false))
	return exitOK
}

// collectSettings lists the settings of a run, lowest precedence first:
// the config file's keys, the environment variables of run's flags that
// are set, and the flags given. An unknown key is a problem at once; a
// key of another command's flag (maintain's expire-after, in a file the
// two share) is not run's to check, as run itself ignores it.
func collectSettings(root, runNode *kong.Node, file map[string]any, flags []flagArg) ([]*setting, []string) {
	known := map[string]bool{}
	envFlag := map[string]string{}
	for _, f := range runNode.Flags {
		known[f.Name] = true
		for _, e := range f.Envs {
			envFlag[e] = f.Name
		}
	}
	elsewhere := flagNames(root)
	var settings []*setting
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(file)) { // kebab-case already
		if !known[k] {
			if !elsewhere[k] {
				problems = append(problems, fmt.Sprintf("%s: unknown key (keys are the long flag names of exporter run)", k))
			}
			continue
		}
		settings = append(settings, &setting{name: k, flag: k, key: true, value: file[k]})
	}
	for _, e := range slices.Sorted(maps.Keys(envFlag)) {
		if _, ok := os.LookupEnv(e); ok {
			settings = append(settings, &setting{name: e, flag: envFlag[e], env: true})
		}
	}
	for _, g := range flags {
		s := &setting{name: strings.SplitN(g.args[0], "=", 2)[0], args: g.args}
		if g.flag != nil && g.flag.Name != "config" {
			s.name, s.flag = "--"+g.flag.Name, g.flag.Name
		}
		settings = append(settings, s)
	}
	return settings, problems
}

// checkTogether checks the settings that are well-formed on their own
// together, as run would take them: settings that do not work together,
// files that do not exist, bad hints, a missing source.
func checkTogether(settings []*setting) []string {
	var problems []string
	values := map[string]any{}
	var env, args []string
	origin := map[string]string{} // where each flag's value comes from
	hasSource := false
	for _, s := range settings { // lowest precedence first
		hasSource = hasSource || s.flag == "source"
		if !s.good {
			continue
		}
		switch {
		case s.key:
			values[s.flag] = s.value
		case s.env:
			env = append(env, s.name)
		default:
			args = append(args, s.args...)
		}
		if s.flag != "" {
			origin[s.flag] = s.name
		}
	}
	if !hasSource {
		problems = append(problems, "source: missing: "+missingSource)
	}
	if origin["source"] == "" {
		values["source"] = "stdin" // missing, or bad and reported
	}
	c, err := parseRun(values, env, args)
	if err != nil {
		return append(problems, err.Error())
	}
	if _, _, err = c.Run.pipelineConfig(nil, slog.New(slog.DiscardHandler)); err != nil {
		if ue := (unusableSinkError{}); errors.As(err, &ue) {
			err = fmt.Errorf("--sink: %w", err)
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			problems = append(problems, attribute(strings.TrimSpace(line), origin))
		}
	}
	return problems
}

// parseRun parses `exporter run args` over the config values with only
// the environment variables in env: the others are not read.
func parseRun(values map[string]any, env []string, args []string) (*cli, error) {
	var c cli
	p, err := newParser(&c, io.Discard, io.Discard, func(int) {}, kong.Resolvers(&yamlConfig{values: values}))
	if err != nil {
		return nil, err
	}
	var keep func(n *kong.Node)
	keep = func(n *kong.Node) {
		for _, f := range n.Flags {
			var envs []string
			for _, e := range f.Envs {
				if slices.Contains(env, e) {
					envs = append(envs, e)
				}
			}
			f.Envs, f.Tag.Envs = envs, envs
		}
		for _, ch := range n.Children {
			keep(ch)
		}
	}
	keep(p.Model.Node)
	_, err = p.Parse(append([]string{"run"}, args...))
	return &c, err
}

// attribute names a problem of the run's configuration, "--flag: ...",
// after where the flag's value comes from: its config key, environment
// variable or flag (the flag for a default).
func attribute(line string, origin map[string]string) string {
	name, rest, ok := strings.Cut(strings.TrimPrefix(line, "--"), ": ")
	if !ok || !strings.HasPrefix(line, "--") || strings.ContainsAny(name, " ,") {
		return line
	}
	if o := origin[name]; o != "" {
		return o + ": " + rest
	}
	return line
}

func commandNode(app *kong.Node, name string) *kong.Node {
	for _, ch := range app.Children {
		if ch.Name == name {
			return ch
		}
	}
	return app
}

// flagArg is one flag of a command line and its value, or another
// argument (flag nil).
type flagArg struct {
	flag *kong.Flag
	args []string
}

// flagGroups splits a command line into one group per flag of run or of
// the application (the flag and, unless it is a switch or has its value
// after "=", the next argument) and one per other argument.
func flagGroups(app, run *kong.Node, args []string) []flagArg {
	var groups []flagArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		f := lookupFlag(a, run, app)
		if f != nil && strings.HasPrefix(a, "--") && !strings.Contains(a, "=") && !f.IsBool() && i+1 < len(args) {
			groups = append(groups, flagArg{f, []string{a, args[i+1]}})
			i++
			continue
		}
		groups = append(groups, flagArg{f, []string{a}})
	}
	return groups
}

// lookupFlag finds the flag an argument names (--name, --name=value,
// --no-name for a negatable flag, -h) among the nodes' flags.
func lookupFlag(arg string, nodes ...*kong.Node) *kong.Flag {
	name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
	for _, n := range nodes {
		for _, f := range n.Flags {
			switch {
			case strings.HasPrefix(arg, "--") && name == f.Name,
				strings.HasPrefix(arg, "--no-") && f.Tag.Negatable != "" && name == "no-"+f.Name,
				len(arg) == 2 && arg[0] == '-' && f.Short != 0 && rune(arg[1]) == f.Short:
				return f
			}
		}
	}
	return nil
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// stdio is a command's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// cmdline is one command's flags and usage line. Every command parses its
// arguments through one, so that --help prints that command's own flags on
// stdout and exits 0, and a usage error prints the error and the usage on
// stderr and exits 2.
type cmdline struct {
	fs    *flag.FlagSet
	usage string // after "procgraph ": "capture FILE [flags]"
	about string // what the command does, printed under the usage line
	json  *bool  // --json, when the command has it
	// wide and noColor are --wide and --no-color, with --json: the
	// human rendering on a terminal (termOut).
	wide, noColor *bool
}

// newCmdline starts a command's flags; withJSON adds --json.
func newCmdline(name, usage, about string, withJSON bool) *cmdline {
	c := &cmdline{fs: newFlagSet(name), usage: usage, about: about}
	if withJSON {
		c.json = c.fs.Bool("json", false, "print the answer as JSON for scripts (the API's fields, in its order)")
		c.wide = c.fs.Bool("wide", false, "on a terminal, print tables as wide as their cells (default: fit the terminal)")
		c.noColor = c.fs.Bool("no-color", false, "on a terminal, print without colour (also NO_COLOR)")
	}
	return c
}

// enum defines a flag that takes one of values (or def): a value outside
// them is a usage error that lists them. The help lists them after usage.
func (c *cmdline) enum(name, def, usage string, values ...string) *string {
	v := def
	c.fs.Var(&text{&v, oneOf(values...)}, name, usage+" ("+orList(quoteEmpty(values))+")")
	return &v
}

// quoteEmpty shows an empty value of a list as "".
func quoteEmpty(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = v
		if v == "" {
			out[i] = `""`
		}
	}
	return out
}

// asJSON reports whether --json was given.
func (c *cmdline) asJSON() bool { return c.json != nil && *c.json }

// parse parses flags standing before, between or after the positionals and
// requires between min and max positionals (max < 0: any number). done
// reports that the command ends here with code.
func (c *cmdline) parse(args []string, min, max int, s stdio) (pos []string, code int, done bool) {
	repeat := singleValued(c.fs)
	pos, err := parseInterleaved(c.fs, args)
	if *repeat != nil {
		err = *repeat
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printUsage(s.out)
		return nil, 0, true
	case err != nil:
		msg := strings.Replace(err.Error(), " for flag -", " for flag --", 1)
		return nil, c.fail(s, msg+flagSuggestion(c.fs, err)), true
	case len(pos) < min || (max >= 0 && len(pos) > max):
		return nil, c.fail(s, fmt.Sprintf("wrong number of arguments: %q", pos)), true
	}
	if t, ok := s.out.(*termOut); ok && c.wide != nil {
		if *c.wide {
			t.width = 0
		}
		if *c.noColor {
			t.color = false
		}
	}
	return pos, 0, false
}

// fail prints a usage error with the usage and returns exit code 2.
func (c *cmdline) fail(s stdio, msg string) int {
	fmt.Fprintf(s.err, "procgraph %s: %s\nusage: procgraph %s\n(procgraph %s --help lists the flags)\n", c.fs.Name(), msg, c.usage, c.fs.Name())
	return 2
}

// printUsage prints the usage line, what the command does and its flags.
func (c *cmdline) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: procgraph %s\n", c.usage)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", c.about)
	}
	if hasFlags(c.fs) {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, c.fs)
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseInterleaved parses flags that may stand before, between or after
// positional arguments, and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// repeated is a flag that may be given many times.
type repeated []string

// singleValued makes every flag of fs but the repeated ones refuse a
// second value: `--tools a --tools b` is an error, never "the last one
// wins" (which would silently drop a's catalogue or upstream). The error
// returned through the pointer, once parsing is done, is the first repeat.
// Call it once, after the flags are defined and before parsing.
func singleValued(fs *flag.FlagSet) *error {
	first := new(error)
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value
		if n, ok := v.(*named); ok {
			v = n.Value
		}
		switch v.(type) {
		case *repeated, urlList:
			return
		}
		f.Value = &once{Value: f.Value, name: f.Name, first: first}
	})
	return first
}

// once is a flag that takes one value.
type once struct {
	flag.Value
	name  string
	given bool
	first *error
}

func (o *once) Set(v string) error {
	if o.given {
		err := fmt.Errorf("--%s is given more than once: it takes one value", o.name)
		if *o.first == nil {
			*o.first = err
		}
		return err
	}
	o.given = true
	return o.Value.Set(v)
}

// IsBoolFlag keeps a boolean flag usable without a value.
func (o *once) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// printFlags lists fs's flags, each with its meaning and default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg := " VALUE"
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			arg = ""
		}
		usage := f.Usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(usage, "default") {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  --%s%s\n      %s\n", f.Name, arg, usage)
	})
}

// given reports whether the flag name was set on the command line.
func (c *cmdline) given(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/procgraph/procgraph/mcpdispatch"
)

// The typed values of serve's settings: each Set refuses what its setting
// cannot hold, in words that follow the setting's names.

// text is a string setting with an optional check.
type text struct {
	dst   *string
	check func(string) error
}

func (t *text) String() string {
	if t == nil || t.dst == nil {
		return ""
	}
	return *t.dst
}

func (t *text) Set(v string) error {
	if t.check != nil {
		if err := t.check(v); err != nil {
			return err
		}
	}
	*t.dst = v
	return nil
}

// oneOf accepts exactly one of values.
func oneOf(values ...string) func(string) error {
	return func(v string) error {
		for _, ok := range values {
			if v == ok {
				return nil
			}
		}
		return fmt.Errorf("%q is not %s", v, orList(quoteEmpty(values)))
	}
}

// orList is "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

func nonBlank(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("must name a file")
	}
	return nil
}

func validHostPort(v string) error {
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("%q is not host:port: %v", v, err)
	}
	return nil
}

// httpURL accepts an absolute http:// or https:// URL with a host.
func httpURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q must be an http:// or https:// URL with a host", v)
	}
	return nil
}

// strictBool accepts exactly "true" or "false" (not 1, yes or TRUE). It is
// not a boolean flag: the value is always given (--x true).
type strictBool bool

func (b *strictBool) String() string {
	if b == nil {
		return "false"
	}
	return strconv.FormatBool(bool(*b))
}

func (b *strictBool) Set(v string) error {
	switch v {
	case "true":
		*b = true
	case "false":
		*b = false
	default:
		return fmt.Errorf("%q is not true or false", v)
	}
	return nil
}

// count is a whole number within [min, max].
type count struct {
	dst      *int
	min, max int
}

func (c *count) String() string {
	if c == nil || c.dst == nil {
		return ""
	}
	return strconv.Itoa(*c.dst)
}

func (c *count) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < c.min || n > c.max {
		return fmt.Errorf("%q must be a whole number from %d to %d", v, c.min, c.max)
	}
	*c.dst = n
	return nil
}

// argv is a program and its arguments, split as a shell would
// (mcpdispatch.SplitCommand).
type argv []string

func (c *argv) String() string {
	if c == nil {
		return ""
	}
	return strings.Join(*c, " ")
}

func (c *argv) Set(v string) error {
	words, err := mcpdispatch.SplitCommand(v)
	if err != nil {
		return err
	}
	*c = words
	return nil
}

// duration is a time.Duration within [min, max] ("30s", "1m30s").
type duration struct {
	dst      *time.Duration
	min, max time.Duration
}

func (d *duration) String() string {
	if d == nil || d.dst == nil {
		return ""
	}
	return d.dst.String()
}

func (d *duration) Set(v string) error {
	x, err := time.ParseDuration(v)
	if err != nil || x < d.min || x > d.max {
		return fmt.Errorf("%q must be a duration from %s to %s (e.g. 30s)", v, d.min, d.max)
	}
	*d.dst = x
	return nil
}

// byteSize is a number of bytes within [min, max]: a whole number, or
// with a unit (256MiB, 4 MiB, 1GB).
type byteSize struct {
	dst      *int64
	min, max int64
}

func (b *byteSize) String() string {
	if b == nil || b.dst == nil {
		return ""
	}
	return strconv.FormatInt(*b.dst, 10)
}

func (b *byteSize) Set(v string) error {
	n, err := humanize.ParseBytes(v)
	if err != nil || n < uint64(b.min) || n > uint64(b.max) {
		return fmt.Errorf("%q must be a size from %s to %s (bytes, or with a unit: 256MiB)", v, humanize.IBytes(uint64(b.min)), humanize.IBytes(uint64(b.max)))
	}
	*b.dst = int64(n)
	return nil
}

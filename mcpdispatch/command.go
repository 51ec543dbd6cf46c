package mcpdispatch

import (
	"errors"
	"strings"
)

// SplitCommand splits a command line ("CMD ARGS", e.g. the value of
// --upstream-mcp-command) into argv without a shell: words are separated by
// spaces or tabs, '…' quotes literally, "…" quotes with \" and \\ escapes,
// and a backslash outside quotes escapes the next character. No variable,
// glob or tilde expansion. An empty command or an open quote is an error.
func SplitCommand(s string) ([]string, error) {
	var argv []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\':
			escaped, inWord = true, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				argv = append(argv, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("the command has an unterminated quote or a trailing backslash")
	}
	if inWord {
		argv = append(argv, cur.String())
	}
	if len(argv) == 0 {
		return nil, errors.New("the command is empty")
	}
	if argv[0] == "" {
		return nil, errors.New("the command's program name is empty")
	}
	return argv, nil
}

//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// errReply is a reply that is an error or has a shape no XREAD reply has.
var errReply = errors.New("not an XREAD reply")

// complete reports whether b starts with one whole RESP2 reply: the
// length of that reply, or 0 when more bytes are needed. An error reply
// is an error.
func complete(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	eol := bytes.Index(b, []byte("\r\n"))
	if eol < 0 {
		return 0, nil
	}
	head, rest := b[1:eol], eol+2
	switch b[0] {
	case '+', ':':
		return rest, nil
	case '-':
		return 0, fmt.Errorf("%w: %s", errReply, head)
	case '$':
		n, err := strconv.Atoi(string(head))
		if err != nil {
			return 0, errReply
		}
		if n < 0 {
			return rest, nil
		}
		if len(b) < rest+n+2 {
			return 0, nil
		}
		return rest + n + 2, nil
	case '*':
		n, err := strconv.Atoi(string(head))
		if err != nil {
			return 0, errReply
		}
		for range max(n, 0) {
			m, err := complete(b[rest:])
			if m == 0 || err != nil {
				return 0, err
			}
			rest += m
		}
		return rest, nil
	}
	return 0, errReply
}

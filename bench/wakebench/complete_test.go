//go:build linux

package main

import (
	"errors"
	"testing"
)

func TestComplete(t *testing.T) {
	reply := "*1\r\n*2\r\n$11\r\nwakebench:s\r\n*1\r\n*2\r\n$15\r\n1700000000000-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
	// Every proper prefix is incomplete; the whole is complete.
	for i := range len(reply) {
		if n, err := complete([]byte(reply[:i])); n != 0 || err != nil {
			t.Fatalf("prefix of %d bytes: complete = %d, %v; want 0, nil", i, n, err)
		}
	}
	if n, err := complete([]byte(reply + "+OK\r\n")); n != len(reply) || err != nil {
		t.Fatalf("whole reply: complete = %d, %v; want %d, nil", n, err, len(reply))
	}
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"*-1\r\n", 5, false},
		{"$-1\r\n", 5, false},
		{":12\r\n", 5, false},
		{"*0\r\n", 4, false},
		{"$3\r\nab", 0, false},
		{"-ERR no\r\n", 0, true},
		{"?x\r\n", 0, true},
		{"*x\r\n", 0, true},
	}
	for _, tt := range tests {
		n, err := complete([]byte(tt.in))
		if n != tt.want || (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, errReply)) {
			t.Errorf("complete(%q) = %d, %v; want %d, error %v", tt.in, n, err, tt.want, tt.wantErr)
		}
	}
}

package main

import "github.com/eddy-streams/eddy/bench/internal/resp"

// The reply parsers of the loads, on bench/internal/resp's connection:
// they read replies in place and copy out only the bytes a load keeps
// (entry IDs, the XAUTOCLAIM cursor), so the measurement loops allocate
// nothing per call.

// idList holds entry IDs back to back in one buffer, so a read/ack loop
// can collect them and write them out again without allocating.
type idList struct {
	buf  []byte
	ends []int
}

func (l *idList) reset() { l.buf, l.ends = l.buf[:0], l.ends[:0] }

func (l *idList) len() int { return len(l.ends) }

func (l *idList) at(i int) []byte {
	start := 0
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.buf[start:l.ends[i]]
}

// readEntries reads an XREADGROUP/XREAD reply (RESP2: an array of [key,
// entries] pairs, or a nil array when nothing was read) and appends each
// entry's ID to ids. Fields are skipped.
func readEntries(c *resp.Conn, ids *idList) error {
	streams, err := c.ArrayLen()
	if err != nil {
		return err
	}
	for i := 0; i < streams; i++ {
		if n, err := c.ArrayLen(); err != nil || n != 2 {
			return orProtocol(err)
		}
		if err := c.Skip(); err != nil { // key
			return err
		}
		if err := readEntryArray(c, ids); err != nil {
			return err
		}
	}
	return nil
}

// readEntryArray reads an array of [id, fields] entries, appending the IDs.
func readEntryArray(c *resp.Conn, ids *idList) error {
	n, err := c.ArrayLen()
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		if m, err := c.ArrayLen(); err != nil || m != 2 {
			return orProtocol(err)
		}
		var ok bool
		if ids.buf, ok, err = c.Bulk(ids.buf); err != nil || !ok {
			return orProtocol(err)
		}
		ids.ends = append(ids.ends, len(ids.buf))
		if err := c.Skip(); err != nil { // fields, or nil for a deleted entry
			return err
		}
	}
	return nil
}

// readAutoclaim reads an XAUTOCLAIM reply (Redis 7: cursor, claimed entries,
// deleted IDs), replacing cursor with the next cursor and returning how
// many entries were claimed.
func readAutoclaim(c *resp.Conn, cursor []byte, claimed *idList) ([]byte, error) {
	if n, err := c.ArrayLen(); err != nil || n != 3 {
		return cursor, orProtocol(err)
	}
	cursor, ok, err := c.Bulk(cursor[:0])
	if err != nil || !ok {
		return cursor, orProtocol(err)
	}
	if err := readEntryArray(c, claimed); err != nil {
		return cursor, err
	}
	return cursor, c.Skip()
}

func orProtocol(err error) error {
	if err == nil {
		return resp.ErrProtocol
	}
	return err
}

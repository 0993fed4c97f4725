package tests

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// groupSetup is a stream s with entries 1-0..5-0 and a group g at 0.
var groupSetup = script(xadds("s", 1, 5), "XGROUP CREATE s g 0")

func TestDiffXGroup(t *testing.T) {
	t.Parallel()
	newDiffPair(t).run(t, []diffCase{
		{"create", []string{
			"XGROUP CREATE s g 0",
			"XGROUP CREATE s g 0 MKSTREAM",
			"XGROUP CREATE s g $ mkstream",
			"XGROUP CREATE s g2 $",
			"XGROUP CREATE s g3 5",
			"XGROUP CREATE s g4 18446744073709551615-18446744073709551615 ENTRIESREAD 9223372036854775807",
			"XGROUP CREATE s g5 0 ENTRIESREAD -1",
			"XGROUP CREATE s g6 0 mkstream mkstream mkstream",
			"XGROUP cReAtE s g7 1-1 ENTRIESREAD 3 MKSTREAM",
			"XGROUP CREATE s g8 0 ENTRIESREAD 1 ENTRIESREAD 2",
			"XINFO GROUPS s",
			"TYPE s",
			"XLEN s",
			"XADD t 3-0 f v",
			"XGROUP CREATE t g $",
			"XINFO GROUPS t",
		}},
		{"create errors", []string{
			"XGROUP CREATE s g 0",
			"XGROUP CREATE s g bad",
			"XGROUP CREATE s g bad mkstream",
			"XGROUP CREATE s g 0 foo",
			"XGROUP CREATE s g 0 entriesread",
			"XGROUP CREATE s g 0 entriesread -2",
			"XGROUP CREATE s g 0 entriesread abc",
			"XGROUP CREATE s g 0 mkstream entriesread 1 entriesread 2",
			"XGROUP CREATE s g 0 entriesread 1 entriesread 2",
			"XGROUP CREATE s g 0 MKSTREAM",
			"XGROUP CREATE s g 1 MKSTREAM",
			"XGROUP CREATE s g bad MKSTREAM",
			"XGROUP CREATE s h -",
			"XGROUP CREATE s h +",
			"XGROUP CREATE s h 1-*",
			"XGROUP CREATE s h (1",
			`XGROUP CREATE s h ""`,
			"XGROUP CREATE s g 0 mkstream mkstream mkstream mkstream",
			"XGROUP CREATE s",
			"XGROUP CREATE s g",
			"SET str x",
			"XGROUP CREATE str g 0",
			"XGROUP CREATE str g bad",
			"XGROUP CREATE str g 0 MKSTREAM",
			"XGROUP CREATE str g 0 foo",
			"EXISTS s",
		}},
		{"setid", script(groupSetup,
			"XGROUP SETID s g 3",
			"XINFO GROUPS s",
			"XGROUP SETID s g -",
			"XINFO GROUPS s",
			"XGROUP SETID s g +",
			"XINFO GROUPS s",
			"XGROUP SETID s g $ ENTRIESREAD 5",
			"XINFO GROUPS s",
			"XGROUP SETID s g 2-0 entriesread 2",
			"XINFO GROUPS s",
			"XGROUP SETID s g 0 ENTRIESREAD -1",
			"XINFO GROUPS s",
			"XGROUP SETID s g 1-*",
			"XGROUP SETID s g bad",
			"XGROUP SETID s g (1",
			"XGROUP SETID s nog bad",
			"XGROUP SETID s nog 0",
			"XGROUP SETID s g 0 entriesread",
			"XGROUP SETID s g 0 entriesread -2",
			"XGROUP SETID s g 0 entriesread abc",
			"XGROUP SETID s g 0 mkstream",
			"XGROUP SETID s g 0 foo 5",
			"XGROUP SETID s g 0 entriesread 5 x",
			"XGROUP SETID s g 0 entriesread 5 entriesread 6",
			"XGROUP SETID s nog 0 entriesread 5 entriesread 6",
			"XGROUP SETID s nog 0 entriesread -2",
			"XGROUP SETID s g bad entriesread -5",
			"XGROUP SETID nokey g 0",
			"XGROUP SETID nokey g 0 entriesread -5",
			"XGROUP SETID nokey g 0 mkstream",
			"XGROUP SETID nokey g 0 entriesread 5 entriesread 6",
			"SET str x",
			"XGROUP SETID str g 0",
		)},
		{"consumers and destroy", script(groupSetup,
			"XGROUP CREATECONSUMER s g c",
			"XGROUP CREATECONSUMER s g c",
			"XGROUP CREATECONSUMER s g d",
			"XREADGROUP GROUP g d COUNT 2 STREAMS s >",
			"XINFO GROUPS s",
			"XGROUP DELCONSUMER s g d",
			"XGROUP DELCONSUMER s g d",
			"XGROUP DELCONSUMER s g c",
			"XINFO GROUPS s",
			"XPENDING s g",
			"XGROUP CREATECONSUMER s nog c",
			"XGROUP DELCONSUMER s nog c",
			"XGROUP CREATECONSUMER nokey g c",
			"XGROUP DELCONSUMER nokey g c",
			"XGROUP DESTROY nokey g",
			"XGROUP DESTROY s nog",
			"XGROUP DESTROY s g",
			"XGROUP DESTROY s g",
			"XINFO GROUPS s",
			"XGROUP DESTROY s g x",
			"XGROUP CREATECONSUMER s g",
			"XGROUP DELCONSUMER s g c d",
			"SET str x",
			"XGROUP CREATECONSUMER str g c",
			"XGROUP DELCONSUMER str g c",
			"XGROUP DESTROY str g",
			`XGROUP CREATECONSUMER s "a\r\nb" c`,
		)},
		{"help and unknown", []string{
			"XGROUP HELP",
			"XGROUP help",
			"XGROUP HELP x",
			"XGROUP",
			"XGROUP FOO",
			"XGROUP FOO a b c",
		}},
		{"group names are binary", []string{
			`XGROUP CREATE s "g\x00x" 0 MKSTREAM`,
			`XGROUP CREATE s "g\x00y" 0`,
			`XGROUP CREATE s "" 0`,
			"XINFO GROUPS s",
			`XGROUP SETID s "g\x00z" 0`,
			`XGROUP DESTROY s "g\x00x"`,
			"XINFO GROUPS s",
		}},
		{"group order", []string{
			"XGROUP CREATE s bb 0 MKSTREAM",
			"XGROUP CREATE s a 0",
			"XGROUP CREATE s ccc 0",
			"XGROUP CREATE s b 0",
			"XINFO GROUPS s",
			"XGROUP CREATECONSUMER s a zz",
			"XGROUP CREATECONSUMER s a z",
			"XGROUP CREATECONSUMER s a y1",
			"XINFO CONSUMERS s a",
		}},
	})
}

func TestDiffXReadGroup(t *testing.T) {
	t.Parallel()
	newDiffPair(t).run(t, []diffCase{
		{"new entries", script(groupSetup,
			"XREADGROUP GROUP g c COUNT 2 STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s >",
			"XREADGROUP GROUP g c BLOCK 10 STREAMS s >",
			"XINFO GROUPS s",
			"XPENDING s g",
			"XADD s 6-0 f 6",
			"XREADGROUP GROUP g d COUNT 0 STREAMS s >",
			"XPENDING s g",
			"XINFO STREAM s",
		)},
		{"history", script(groupSetup,
			"XREADGROUP GROUP g c COUNT 3 STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XREADGROUP GROUP g c COUNT 1 STREAMS s 1",
			"XREADGROUP GROUP g c STREAMS s 3-0",
			"XREADGROUP GROUP g c STREAMS s 18446744073709551615-18446744073709551614",
			"XREADGROUP GROUP g c STREAMS s 18446744073709551615-18446744073709551615",
			"XREADGROUP GROUP g other STREAMS s 0",
			"XDEL s 2-0",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XREADGROUP GROUP g c COUNT -1 STREAMS s 0",
			"XREADGROUP GROUP g c NOACK STREAMS s 0",
			"XPENDING s g - + 10",
			"XINFO CONSUMERS s g",
		)},
		{"noack", script(groupSetup,
			"XREADGROUP GROUP g c NOACK COUNT 2 STREAMS s >",
			"XPENDING s g",
			"XINFO GROUPS s",
			"XREADGROUP GROUP g c STREAMS s 0",
		)},
		{"several keys", script(groupSetup,
			"XADD t 1-0 a 1",
			"XGROUP CREATE t g $",
			"XREADGROUP GROUP g c STREAMS s t > >",
			"XREADGROUP GROUP g c STREAMS t s > >",
			"XREADGROUP GROUP g c STREAMS t s > 0",
			"XREADGROUP GROUP g c STREAMS s s > >",
			"XREADGROUP GROUP g c STREAMS s s 0 >",
			"XADD t 2-0 a 2",
			"XREADGROUP GROUP g c COUNT 1 STREAMS s t > >",
			"XREADGROUP GROUP g c BLOCK 5 STREAMS s t > >",
		)},
		{"errors", script(groupSetup,
			"SET str x",
			"XREADGROUP GROUP g c STREAMS s",
			"XREADGROUP GROUP g STREAMS s >",
			"XREADGROUP g c STREAMS s >",
			"XREADGROUP COUNT 1 STREAMS s >",
			"XREADGROUP COUNT 1 STREAMS s > x y",
			"XREADGROUP STREAMS s > x y",
			"XREADGROUP GROUP g c STREAMS nokey >",
			"XREADGROUP GROUP nog c STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s bad",
			"XREADGROUP GROUP g c STREAMS s $",
			"XREADGROUP GROUP g c STREAMS s -",
			"XREADGROUP GROUP g c STREAMS s +",
			"XREADGROUP GROUP g c STREAMS s (1",
			"XREADGROUP GROUP g c STREAMS s t >",
			"XREADGROUP GROUP g c STREAMS s t > >",
			"XREADGROUP GROUP g c STREAMS s 0 s 0",
			"XREADGROUP GROUP g c COUNT 1 GROUP nog c2 STREAMS s 0",
			"XREADGROUP GROUP g c STREAMS str >",
			"XREADGROUP GROUP g c STREAMS s str 0 >",
			"XREADGROUP GROUP g c STREAMS s str bad >",
			"XREADGROUP GROUP g c STREAMS s nokey bad >",
			"XREADGROUP GROUP g c STREAMS s nokey $ >",
			"XREADGROUP GROUP g c STREAMS s nokey 0 $",
			"XREADGROUP GROUP g c STREAMS str bad",
			"XREADGROUP GROUP g c STREAMS nokey bad",
			"XREADGROUP GROUP g c STREAMS s > BLOCK 0",
			"XREADGROUP GROUP g c COUNT abc STREAMS s >",
			"XREADGROUP GROUP g c COUNT STREAMS s >",
			"XREADGROUP GROUP g c BLOCK abc STREAMS s >",
			"XREADGROUP GROUP g c BLOCK -1 STREAMS s >",
			"XREADGROUP GROUP g c FOO STREAMS s 0",
			"XREADGROUP GROUP g c NOACK NOACK STREAMS s 0",
			"XINFO CONSUMERS s g",
		)},
		{"consumer created on first use", script(groupSetup,
			"XREADGROUP GROUP g c1 STREAMS s 0",
			"XREADGROUP GROUP g c2 COUNT 1 STREAMS s >",
			"XREADGROUP GROUP g c3 BLOCK 1 STREAMS s 9",
			"XINFO GROUPS s",
			"XINFO CONSUMERS s g",
		)},
		{"deleted and trimmed entries", script(groupSetup,
			"XDEL s 2-0 3-0",
			"XREADGROUP GROUP g c STREAMS s >",
			"XINFO GROUPS s",
			"XDEL s 5-0",
			"XREADGROUP GROUP g c STREAMS s >",
			"XREADGROUP GROUP g c BLOCK 5 STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XTRIM s MAXLEN 0",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XINFO GROUPS s",
			"XADD s 9-0 f 9",
			"XINFO GROUPS s",
		)},
		{"setid replays", script(groupSetup,
			"XREADGROUP GROUP g c STREAMS s >",
			"XGROUP SETID s g 2-0",
			"XINFO GROUPS s",
			"XREADGROUP GROUP g d COUNT 2 STREAMS s >",
			"XPENDING s g",
			"XPENDING s g - + 10 d",
			"XINFO GROUPS s",
		)},
		{"multi does not block", script(groupSetup,
			"XREADGROUP GROUP g c STREAMS s >",
			"MULTI",
			"XREADGROUP GROUP g c BLOCK 0 STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XREADGROUP GROUP nog c STREAMS s 0",
			"EXEC",
			"MULTI",
			"XREADGROUP GROUP g c STREAMS s",
			"EXEC",
		)},
		{"resp3", script("HELLO 3", groupSetup,
			"XREADGROUP GROUP g c COUNT 2 STREAMS s >",
			"XDEL s 1-0",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XREADGROUP GROUP g c STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s >",
			"XPENDING s g",
			"XGROUP CREATE s e 0",
			"XPENDING s e",
			"XINFO GROUPS s",
			"XAUTOCLAIM s g c 0 0",
			"XCLAIM s g d 0 3-0",
			"XGROUP HELP",
		)},
	})
}

func TestDiffXAckXPending(t *testing.T) {
	t.Parallel()
	newDiffPair(t).run(t, []diffCase{
		{"ack", script(groupSetup,
			"XREADGROUP GROUP g c COUNT 3 STREAMS s >",
			"XREADGROUP GROUP g d STREAMS s >",
			"XACK s g 1-0 1-0 9-0",
			"XACK s g 2",
			"XACK s g 2-0",
			"XPENDING s g",
			"XACK s g bad",
			"XACK s g 3-0 bad",
			"XPENDING s g",
			"XACK s g -",
			"XACK s g +",
			"XACK s g 1-*",
			"XACK nokey g bad",
			"XACK nokey g 1-0",
			"XACK s nog 1",
			"XACK s nog bad",
			"XACK s g",
			"SET str x",
			"XACK str g 1",
			"XACK str g bad",
			"XACK s g 3-0 4-0 5-0",
			"XPENDING s g",
			"XINFO GROUPS s",
			"XINFO CONSUMERS s g",
		)},
		{"pending", script(groupSetup,
			"XPENDING s g",
			"XPENDING s g - + 10",
			"XREADGROUP GROUP g c COUNT 3 STREAMS s >",
			"XREADGROUP GROUP g d STREAMS s >",
			"XREADGROUP GROUP g c STREAMS s 0",
			"XPENDING s g",
			"XPENDING s g - + 10",
			"XPENDING s g - + 10 c",
			"XPENDING s g - + 10 zz",
			"XPENDING s g - + 2",
			"XPENDING s g - + 0",
			"XPENDING s g - + -1",
			"XPENDING s g 5 3 10",
			"XPENDING s g (3 + 10",
			"XPENDING s g - (4 10",
			"XPENDING s g - (0 10",
			"XPENDING s g 2 4-0 10 d",
			"XPENDING s g IDLE 0 - + 10",
			"XPENDING s g IDLE -5 - + 10",
			"XPENDING s g idle 3600000 - + 10",
			"XPENDING s g IDLE 0 - + 10 d",
			"XPENDING s g - + 10 c extra",
			"XPENDING s g - + 10 c extra extra2",
			"XPENDING s g IDLE 0 - + 10 c extra",
		)},
		{"pending errors", script(groupSetup,
			"SET str x",
			"XPENDING s g - +",
			"XPENDING s g -",
			"XPENDING s g idle",
			"XPENDING s g idle 5",
			"XPENDING s g idle 5 - +",
			"XPENDING s g idle abc - + 10",
			"XPENDING s g idle abc - +",
			"XPENDING s g - + abc",
			"XPENDING s g bad + abc",
			"XPENDING s g bad + 10",
			"XPENDING s g - bad 10",
			"XPENDING s g ( + 10",
			"XPENDING s g (- + 10",
			"XPENDING s g (18446744073709551615-18446744073709551615 + 10",
			"XPENDING s g - (0-0 10",
			"XPENDING s g IDLE 1 - + 10 c e1 e2",
			"XPENDING s g - + 10 c e1 e2 e3",
			"XPENDING s nog",
			"XPENDING nokey g",
			"XPENDING str g",
			"XPENDING s nog - + 10",
			"XPENDING nokey g bad + 10",
			"XPENDING str g - + 10",
			"XPENDING s",
		)},
	})
}

func TestDiffXClaim(t *testing.T) {
	t.Parallel()
	newDiffPair(t).run(t, []diffCase{
		{"claim", script(groupSetup,
			"XREADGROUP GROUP g c COUNT 3 STREAMS s >",
			"XCLAIM s g d 0 1-0",
			"XCLAIM s g d 0 2-0 JUSTID",
			"XCLAIM s g d 3600000 3-0",
			"XCLAIM s g d -5 3",
			"XCLAIM s g d 0 9-0 4-0 5-0",
			"XPENDING s g - + 10",
			"XCLAIM s g e 0 4-0 FORCE",
			"XCLAIM s g e 0 4-0 5-0 FORCE JUSTID",
			"XCLAIM s g e 0 1-0 1-0 JUSTID",
			"XPENDING s g - + 10",
			"XCLAIM s g e 0 1-0 RETRYCOUNT 7",
			"XCLAIM s g e 0 1-0 RETRYCOUNT -5",
			"XCLAIM s g e 0 1-0 RETRYCOUNT 0 JUSTID",
			"XPENDING s g - + 10",
			"XCLAIM s g e 0 1-0 LASTID 9-0",
			"XINFO GROUPS s",
			"XCLAIM s g e 0 1-0 LASTID 2-0",
			"XINFO GROUPS s",
			"XCLAIM s g e 0 1-0 IDLE 5000 TIME 1000 JUSTID",
			"XCLAIM s g e 0 2-0 TIME 1000 IDLE 5000 JUSTID",
			"XCLAIM s g e 0 3-0 IDLE -5 JUSTID",
			"XCLAIM s g e 0 4-0 TIME -1 JUSTID",
			"XCLAIM s g e 0 5-0 TIME 9223372036854775807 JUSTID",
			"XPENDING s g - + 10",
			"XCLAIM s g f 3600000 1-0 2-0 3-0",
			"XCLAIM s g f 4000 1-0 2-0 3-0 JUSTID",
			"XINFO CONSUMERS s g",
			"XINFO STREAM s FULL",
		)},
		{"claim deleted entries", script(groupSetup,
			"XREADGROUP GROUP g c STREAMS s >",
			"XDEL s 2-0 4-0",
			"XCLAIM s g d 0 1-0 2-0 3-0 4-0",
			"XPENDING s g",
			"XCLAIM s g d 0 4-0 FORCE",
			"XCLAIM s g d 0 6-0 FORCE",
			"XPENDING s g",
			"XINFO CONSUMERS s g",
		)},
		{"claim errors", script(groupSetup,
			"SET str x",
			"XREADGROUP GROUP g c STREAMS s >",
			"XCLAIM s g c2 abc 3-0",
			"XCLAIM s g c2 0 bad",
			"XCLAIM s g c2 0 3-0 bad",
			"XCLAIM s nog c2 0 3-0",
			"XCLAIM nokey g c2 0 3-0",
			"XCLAIM str g c 0 1",
			"XCLAIM nokey g c abc 1",
			"XCLAIM str g c abc 1",
			"XCLAIM s g c 0 3-0 idle",
			"XCLAIM s g c 0 3-0 idle abc",
			"XCLAIM s g c 0 3-0 time abc",
			"XCLAIM s g c 0 3-0 retrycount abc",
			"XCLAIM s g c 0 3-0 lastid bad",
			"XCLAIM s g c 0 3-0 lastid",
			"XCLAIM s g c 0 3-0 foo",
			"XCLAIM s g c 0 3-0 justid foo",
			"XCLAIM s g c 0 3-0 4-0 idle 5 9-0",
			"XCLAIM s g c 0 3-0 -",
			"XCLAIM s g c 0 3-0 +",
			`XCLAIM s g c 0 3-0 "a\r\nb"`,
			"XCLAIM s g c 0",
			"XPENDING s g",
		)},
		{"autoclaim", script(groupSetup,
			"XREADGROUP GROUP g c STREAMS s >",
			"XAUTOCLAIM s g d 0 0 COUNT 1",
			"XAUTOCLAIM s g d 0 0 COUNT 2 JUSTID",
			"XAUTOCLAIM s g d 0 0",
			"XAUTOCLAIM s g e -5 0 JUSTID",
			"XAUTOCLAIM s g e 0 - JUSTID",
			"XAUTOCLAIM s g e 0 + JUSTID",
			"XAUTOCLAIM s g e 0 (3 JUSTID",
			"XAUTOCLAIM s g e 0 3 COUNT 1 COUNT 2 JUSTID JUSTID",
			"XAUTOCLAIM s g f 3600000 0",
			"XPENDING s g - + 10",
			"XDEL s 2-0 3-0",
			"XAUTOCLAIM s g f 0 0 COUNT 1",
			"XAUTOCLAIM s g f 0 0 COUNT 1",
			"XAUTOCLAIM s g f 0 0",
			"XPENDING s g",
			"XINFO CONSUMERS s g",
			"XAUTOCLAIM s g f 0 0 COUNT 1073741824",
		)},
		{"autoclaim attempts", script(xadds("s", 1, 30), "XGROUP CREATE s g 0",
			"XREADGROUP GROUP g c STREAMS s >",
			"XDEL s 3-0 4-0 5-0 6-0",
			"XAUTOCLAIM s g d 3600000 0 COUNT 1",
			"XAUTOCLAIM s g d 3600000 11-0 COUNT 1",
			"XAUTOCLAIM s g d 0 0 COUNT 1",
			"XAUTOCLAIM s g d 0 0 COUNT 2",
			"XPENDING s g",
		)},
		{"autoclaim errors", script(groupSetup,
			"SET str x",
			"XAUTOCLAIM s g c abc 0",
			"XAUTOCLAIM s g c 0 bad",
			"XAUTOCLAIM s g c 0 (18446744073709551615-18446744073709551615 JUSTID",
			"XAUTOCLAIM s g c 0 (-",
			"XAUTOCLAIM s g c 0 0 COUNT 0",
			"XAUTOCLAIM s g c 0 0 COUNT -1",
			"XAUTOCLAIM s g c 0 0 COUNT abc",
			"XAUTOCLAIM s g c 0 0 COUNT",
			"XAUTOCLAIM s g c 0 0 foo",
			"XAUTOCLAIM s g c 0 0 COUNT 922337203685477580",
			"XAUTOCLAIM s g c 0 0 COUNT 576460752303423487",
			"XAUTOCLAIM s g c 0 0 COUNT 576460752303423488",
			"XAUTOCLAIM s g c 0 0 COUNT 92233720368547758",
			"XAUTOCLAIM nokey g c 0 0",
			"XAUTOCLAIM s nog c 0 0",
			"XAUTOCLAIM str g c 0 0",
			"XAUTOCLAIM nokey g c abc bad foo",
			"XAUTOCLAIM s g c 0 bad foo",
			"XAUTOCLAIM nokey g c 0 0 COUNT 92233720368547758",
			"XAUTOCLAIM s g c 0",
		)},
	})
}

func TestDiffXInfoGroups(t *testing.T) {
	t.Parallel()
	newDiffPair(t).run(t, []diffCase{
		{"groups and consumers", script(groupSetup,
			"XGROUP CREATE s e $",
			"XREADGROUP GROUP g c COUNT 2 STREAMS s >",
			"XREADGROUP GROUP g d STREAMS s >",
			"XCLAIM s g c 0 5-0",
			"XINFO GROUPS s",
			"XINFO CONSUMERS s g",
			"XINFO CONSUMERS s e",
			"XINFO CONSUMERS s nog",
			"XINFO CONSUMERS nokey g",
			"XINFO STREAM s",
			"XINFO STREAM s FULL",
			"XINFO STREAM s FULL COUNT 1",
			"XINFO STREAM s FULL COUNT 0",
			"SET str x",
			"XINFO GROUPS str",
			"XINFO CONSUMERS str g",
			"XINFO GROUPS nokey",
			"HELLO 3",
			"XINFO GROUPS s",
			"XINFO CONSUMERS s g",
			"XINFO STREAM s FULL COUNT 1",
		)},
		{"lag", script(
			"XGROUP CREATE s g 0 MKSTREAM",
			"XINFO GROUPS s",
			xadds("s", 1, 5),
			"XGROUP CREATE s mid 3-0",
			"XGROUP CREATE s mid2 3-0 ENTRIESREAD 3",
			"XGROUP CREATE s end $",
			"XINFO GROUPS s",
			"XREADGROUP GROUP g c COUNT 2 STREAMS s >",
			"XINFO GROUPS s",
			"XDEL s 4-0",
			"XINFO GROUPS s",
			"XREADGROUP GROUP g c STREAMS s >",
			"XINFO GROUPS s",
			"XREADGROUP GROUP mid c STREAMS s >",
			"XINFO GROUPS s",
			"XDEL s 1-0",
			"XINFO GROUPS s",
			"XADD s 6-0 f 6",
			"XINFO GROUPS s",
			"XTRIM s MAXLEN 1",
			"XINFO GROUPS s",
			"XSETID s 10-0 ENTRIESADDED 20 MAXDELETEDID 9-0",
			"XINFO GROUPS s",
			"XGROUP SETID s g 8-0",
			"XINFO GROUPS s",
			"XGROUP SETID s g 8-0 ENTRIESREAD 15",
			"XINFO GROUPS s",
		)},
		{"delete and rename keep groups with the key", script(groupSetup,
			"XREADGROUP GROUP g c COUNT 2 STREAMS s >",
			"RENAME s t",
			"XINFO GROUPS t",
			"XPENDING t g",
			"XINFO GROUPS s",
			"DEL t",
			"XADD t 1-0 f v",
			"XINFO GROUPS t",
		)},
	})
}

// TestDiffBlockedXReadGroup blocks an XREADGROUP on both servers, runs the
// same commands on a second connection, and compares what the blocked
// client gets: new entries, or the error Redis 7.0 sends when the key or
// the group goes away, or nil at the timeout.
func TestDiffBlockedXReadGroup(t *testing.T) {
	t.Parallel()
	d := newDiffPair(t)
	const timeout = "2000"
	cases := []struct {
		name    string
		setup   []string
		block   []string
		trigger []string
	}{
		{"xadd", nil, nil, []string{"XADD s 1-0 f v"}},
		{"xadd other key", nil, nil, []string{"XADD other 1-0 f v", "XADD s 2-0 f v"}},
		{"xadd count", nil, []string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "BLOCK", timeout, "STREAMS", "s", ">"},
			[]string{"MULTI", "XADD s 1-0 f v", "XADD s 2-0 f v", "EXEC"}},
		{"noack", nil, []string{"XREADGROUP", "GROUP", "g", "c", "NOACK", "BLOCK", timeout, "STREAMS", "s", ">"},
			[]string{"XADD s 1-0 f v"}},
		{"destroy", nil, nil, []string{"XGROUP DESTROY s g"}},
		{"del", nil, nil, []string{"DEL s"}},
		{"set", nil, nil, []string{"SET s x"}},
		{"flushall", nil, nil, []string{"FLUSHALL"}},
		{"flushdb", nil, nil, []string{"FLUSHDB"}},
		{"rename away", nil, nil, []string{"RENAME s s2"}},
		{"rename in with group", nil, nil, []string{"XADD s2 5-0 a b", "XGROUP CREATE s2 g 0", "RENAME s2 s"}},
		{"rename in without group", nil, nil, []string{"XADD s2 5-0 a b", "RENAME s2 s"}},
		{"expired", nil, nil, []string{"PEXPIRE s 1"}},
		{"xadd then xdel", nil, nil, []string{"MULTI", "XADD s 1-0 f v", "XDEL s 1-0", "EXEC"}},
		{"destroy and create", nil, []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "s", ">"},
			[]string{"MULTI", "XGROUP DESTROY s g", "XGROUP CREATE s g $", "EXEC"}},
		{"xsetid", nil, []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "s", ">"},
			[]string{"XSETID s 5-0"}},
		{"setid and delconsumer do not wake", nil, []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "s", ">"},
			[]string{"XGROUP SETID s g 0", "XGROUP DELCONSUMER s g c", "XADD other 1-0 f v"}},
		{"tail deleted, xdel does not wake",
			[]string{"XADD s 1-0 f v", "XADD s 2-0 f v", "XDEL s 2-0", "XREADGROUP GROUP g x STREAMS s >", "XGROUP SETID s g 1-0"},
			[]string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "s", ">"},
			[]string{"XDEL s 1-0", "PEXPIRE s 100000"}},
		{"second key", nil, []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", timeout, "STREAMS", "t", "s", ">", ">"},
			[]string{"XADD s 1-0 f v"}},
		{"resp3", []string{"HELLO 3"}, nil, []string{"XADD s 1-0 f v"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d.reset(t)
			block := c.block
			if block == nil {
				block = []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", timeout, "STREAMS", "s", ">"}
			}
			var got [2][]byte
			for side, p := range []*serverProc{d.ref, d.sub} {
				ctl := p.Raw()
				for _, k := range []string{"s", "t"} {
					mustDo(t, ctl, "+OK\r\n", "XGROUP", "CREATE", k, "g", "$", "MKSTREAM")
				}
				reader := p.Raw()
				for _, line := range c.setup {
					args, _ := splitArgs(line)
					if _, err := reader.Do(args...); err != nil {
						t.Fatal(err)
					}
				}
				if err := reader.Send(block...); err != nil {
					t.Fatal(err)
				}
				waitBlocked(t, p.Client(), 1)
				for _, line := range c.trigger {
					args, _ := splitArgs(line)
					if _, err := ctl.Do(args...); err != nil {
						t.Fatal(err)
					}
				}
				b, err := reader.ReadTimeout(10 * time.Second)
				if err != nil {
					t.Fatalf("side %d: no reply: %v", side, err)
				}
				got[side] = b
				ctl.Do("FLUSHALL")
			}
			if !bytes.Equal(got[0], got[1]) {
				t.Errorf("blocked XREADGROUP after %q:\nredis: %q\neddy:  %q", c.trigger, got[0], got[1])
			}
		})
	}
}

// groupTimesRule compares the replies that hold wall-clock times (idle
// ms, delivery and seen times) with a tolerance on those fields only:
// XPENDING's extended form, XINFO CONSUMERS and XINFO STREAM FULL.
func groupTimesRule(args []string) (stepRule, bool) {
	var mark func(v *respValue)
	switch up := strings.ToUpper(args[0]); {
	case up == "XPENDING" && len(args) > 3:
		mark = markPendingIdle
	case up == "XINFO" && len(args) > 1 && strings.EqualFold(args[1], "CONSUMERS"):
		mark = func(v *respValue) {
			for i := range v.elems {
				markField(&v.elems[i], "idle")
			}
		}
	case up == "XINFO" && len(args) > 3 && strings.EqualFold(args[1], "STREAM"):
		mark = markStreamFullTimes
	default:
		return stepRule{}, false
	}
	return stepRule{note: "with wall-clock times within 2 s", equal: func(ref, sub []byte) bool {
		a, errA := parseReply(ref)
		b, errB := parseReply(sub)
		if errA != nil || errB != nil {
			return bytes.Equal(ref, sub)
		}
		mark(&a)
		mark(&b)
		return closeTimes(a, b)
	}}, true
}

// timeTyp marks an integer holding a wall-clock time.
const timeTyp = 'T'

func markTime(v *respValue) {
	if v.typ == ':' {
		v.typ = timeTyp
	}
}

// markField marks the value after name in a map (or flat pair array).
func markField(v *respValue, name string) *respValue {
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == name {
			markTime(&v.elems[i+1])
			return &v.elems[i+1]
		}
	}
	return nil
}

// field returns the value after name in a map, or nil.
func field(v *respValue, name string) *respValue {
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == name {
			return &v.elems[i+1]
		}
	}
	return nil
}

func markPendingIdle(v *respValue) {
	for i := range v.elems {
		if e := &v.elems[i]; len(e.elems) == 4 {
			markTime(&e.elems[2])
		}
	}
}

func markStreamFullTimes(v *respValue) {
	groups := field(v, "groups")
	if groups == nil {
		return
	}
	for i := range groups.elems {
		g := &groups.elems[i]
		if pel := field(g, "pending"); pel != nil {
			for j := range pel.elems {
				if len(pel.elems[j].elems) == 4 {
					markTime(&pel.elems[j].elems[2])
				}
			}
		}
		cs := field(g, "consumers")
		if cs == nil {
			continue
		}
		for j := range cs.elems {
			c := &cs.elems[j]
			markField(c, "seen-time")
			if pel := field(c, "pending"); pel != nil {
				for k := range pel.elems {
					if len(pel.elems[k].elems) == 3 {
						markTime(&pel.elems[k].elems[1])
					}
				}
			}
		}
	}
}

// closeTimes compares two decoded replies exactly, except marked times,
// which may differ by 2 s (the two servers' clocks and round trips).
func closeTimes(a, b respValue) bool {
	if a.typ == timeTyp && b.typ == timeTyp {
		x, errX := strconv.ParseInt(a.str, 10, 64)
		y, errY := strconv.ParseInt(b.str, 10, 64)
		return errX == nil && errY == nil && math.Abs(float64(x-y)) <= 2000
	}
	if a.typ != b.typ || a.str != b.str || a.null != b.null || len(a.elems) != len(b.elems) {
		return false
	}
	for i := range a.elems {
		if !closeTimes(a.elems[i], b.elems[i]) {
			return false
		}
	}
	return true
}

// TestGroupTimesRule checks the tolerance applies only where it should.
func TestGroupTimesRule(t *testing.T) {
	pending := func(idle int) []byte {
		return fmt.Appendf(nil, "*1\r\n*4\r\n$3\r\n1-0\r\n$1\r\nc\r\n:%d\r\n:1\r\n", idle)
	}
	r, ok := groupTimesRule([]string{"XPENDING", "s", "g", "-", "+", "10"})
	if !ok || !r.equal(pending(100), pending(1500)) || r.equal(pending(100), pending(5000)) {
		t.Fatal("XPENDING idle tolerance wrong")
	}
	count := func(n int) []byte {
		return fmt.Appendf(nil, "*1\r\n*4\r\n$3\r\n1-0\r\n$1\r\nc\r\n:0\r\n:%d\r\n", n)
	}
	if r.equal(count(1), count(2)) {
		t.Fatal("delivery count compared with tolerance")
	}
	if _, ok := groupTimesRule([]string{"XPENDING", "s", "g"}); ok {
		t.Fatal("XPENDING summary has no time")
	}
}

// groupCmd generates a consumer-group command for the random differential
// test, over groups g1, g2 and consumers c1..c3. Idle thresholds are 0 or
// an hour, so that no reply depends on timing; BLOCK is never sent.
func (g *cmdGen) groupCmd() []string {
	group := func() string { return g.pick("g1", "g1", "g2", "nog") }
	consumer := func() string { return g.pick("c1", "c2", "c3") }
	ids := func(k string) []string {
		var a []string
		for range 1 + g.r.IntN(3) {
			if g.chance(0.05) {
				a = append(a, g.badID())
			} else {
				a = append(a, g.id(k))
			}
		}
		return a
	}
	idle := func() string { return g.pick("0", "0", "3600000", "-1") }
	k := g.streamKey()
	switch g.r.IntN(16) {
	case 0, 1:
		a := []string{"XGROUP", "CREATE", k, group(), g.pick("0", "$", g.id(k))}
		if g.chance(0.5) {
			a = append(a, "MKSTREAM")
		}
		if g.chance(0.2) {
			a = append(a, "ENTRIESREAD", strconv.Itoa(g.r.IntN(12)-2))
		}
		return a
	case 2:
		a := []string{"XGROUP", "SETID", k, group(), g.pick("0", "$", g.id(k), "-", "+")}
		if g.chance(0.3) {
			a = append(a, "ENTRIESREAD", strconv.Itoa(g.r.IntN(12)-2))
		}
		return a
	case 3:
		return []string{"XGROUP", g.pick("CREATECONSUMER", "DELCONSUMER"), k, group(), consumer()}
	case 4:
		if g.chance(0.3) {
			return []string{"XGROUP", "DESTROY", k, group()}
		}
		return []string{"XINFO", "GROUPS", k}
	case 5, 6, 7, 8:
		a := []string{"XREADGROUP", "GROUP", group(), consumer()}
		if g.chance(0.6) {
			a = append(a, "COUNT", g.count())
		}
		if g.chance(0.1) {
			a = append(a, "NOACK")
		}
		a = append(a, "STREAMS")
		n := 1 + g.r.IntN(2)
		var ks, is []string
		for range n {
			kk := g.streamKey()
			ks = append(ks, kk)
			switch {
			case g.chance(0.7):
				is = append(is, ">")
			case g.chance(0.5):
				is = append(is, "0")
			default:
				is = append(is, g.id(kk))
			}
		}
		return append(append(a, ks...), is...)
	case 9, 10:
		return append([]string{"XACK", k, group()}, ids(k)...)
	case 11:
		if g.chance(0.5) {
			return []string{"XPENDING", k, group()}
		}
		a := []string{"XPENDING", k, group()}
		if g.chance(0.3) {
			a = append(a, "IDLE", idle())
		}
		a = append(a, g.rangeBound(k, true), g.rangeBound(k, false), g.count())
		if g.chance(0.4) {
			a = append(a, consumer())
		}
		return a
	case 12, 13:
		a := append([]string{"XCLAIM", k, group(), consumer(), idle()}, ids(k)...)
		for _, opt := range []string{"FORCE", "JUSTID"} {
			if g.chance(0.2) {
				a = append(a, opt)
			}
		}
		if g.chance(0.2) {
			a = append(a, "RETRYCOUNT", strconv.Itoa(g.r.IntN(5)))
		}
		if g.chance(0.1) {
			a = append(a, "LASTID", g.id(k))
		}
		return a
	case 14:
		a := []string{"XAUTOCLAIM", k, group(), consumer(), idle(), g.rangeBound(k, true)}
		if g.chance(0.5) {
			a = append(a, "COUNT", g.count())
		}
		if g.chance(0.3) {
			a = append(a, "JUSTID")
		}
		return a
	default:
		return []string{"XINFO", "CONSUMERS", k, group()}
	}
}

// TestDiffPipelinedGroupWrites sends consumer-group reads and acks, and
// writes that fail among them, in one pipeline, as a worker pool's client
// does: Eddy runs such runs of writes (XREADGROUP without BLOCK included)
// in one transaction and replays it one by one when a command fails, and
// every reply must be what Redis sends.
func TestDiffPipelinedGroupWrites(t *testing.T) {
	t.Parallel()
	d := newDiffPair(t)
	const sentinel = "*2\r\n$4\r\nECHO\r\n$3\r\nEND\r\n"
	var in []byte
	for _, line := range []string{
		"XADD ps 1-1 f v", "XADD ps 2-1 f v", "XADD ps 3-1 f v", "XGROUP CREATE ps g 0",
		"XREADGROUP GROUP g a COUNT 1 STREAMS ps >", "XREADGROUP GROUP g b COUNT 1 STREAMS ps >",
		"XACK ps g 1-1", "XREADGROUP GROUP nog a STREAMS ps >", "XADD ps 1-1 f v",
		"XREADGROUP GROUP g a COUNT 5 STREAMS ps >", "XACK ps g 2-1 3-1 9-9",
		"XREADGROUP GROUP g b STREAMS ps 0", "XADD ps 4-1 f v", "XREADGROUP GROUP g a NOACK STREAMS ps >",
		"XPENDING ps g",
	} {
		in = append(in, encodeCommand(strings.Fields(line))...)
	}
	ref := protocolTranscript(t, dialRaw(t, d.ref.Addr()), string(in)+sentinel)
	sub := protocolTranscript(t, dialRaw(t, d.sub.Addr()), string(in)+sentinel)
	if ref != sub {
		t.Errorf("pipelined group writes:\nredis: %q\neddy:  %q", ref, sub)
	}
}

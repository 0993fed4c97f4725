package stream

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
)

// strState prepares key "k": "" missing, "stream" a stream, else a string.
func strState(k *ksEnv, state string) {
	k.t.Helper()
	switch state {
	case "":
	case "stream":
		k.stream(0, "k", 2)
	default:
		k.set(0, "k", state, 0)
	}
	k.takeChanges()
}

func TestGetStrLenGetDel(t *testing.T) {
	cases := []struct {
		state  string
		val    string
		ok     bool
		err    error
		getdel []string // changes GETDEL notes
	}{
		{"", "", false, nil, nil},
		{"hello", "hello", true, nil, []string{"deleted 0 k"}},
		{"", "", false, nil, nil},
		{"stream", "", false, ErrWrongType, nil},
	}
	for _, c := range cases {
		k := newKS(t)
		strState(k, c.state)
		k.view(func(tx *Tx) error {
			v, ok, err := tx.Get(0, []byte("k"))
			if string(v) != c.val || ok != c.ok || !errors.Is(err, c.err) {
				t.Errorf("%q: GET = %q, %v, %v", c.state, v, ok, err)
			}
			n, err := tx.StrLen(0, []byte("k"))
			if n != int64(len(c.val)) || !errors.Is(err, c.err) {
				t.Errorf("%q: STRLEN = %d, %v", c.state, n, err)
			}
			return nil
		})
		err := k.e.Update(func(tx *Tx) error {
			v, ok, err := tx.GetDel(0, []byte("k"))
			if string(v) != c.val || ok != c.ok {
				t.Errorf("%q: GETDEL = %q, %v", c.state, v, ok)
			}
			return err
		})
		if !errors.Is(err, c.err) {
			t.Errorf("%q: GETDEL: %v", c.state, err)
		}
		if ch := k.takeChanges(); !slices.Equal(ch, c.getdel) {
			t.Errorf("%q: GETDEL noted %v", c.state, ch)
		}
		if want := c.state == "stream"; (k.describe(0, "k") != "") != want {
			t.Errorf("%q: key left: %q", c.state, k.describe(0, "k"))
		}
	}
}

func TestSet(t *testing.T) {
	cases := []struct {
		name   string
		state  string
		o      SetOptions
		old    string
		hadOld bool
		done   bool
		err    error
		after  string // describe() of k afterwards
	}{
		{"new", "", SetOptions{}, "", false, true, nil, "new"},
		{"overwrite", "v0", SetOptions{}, "v0", true, true, nil, "new"},
		{"nx missing", "", SetOptions{NX: true}, "", false, true, nil, "new"},
		{"nx present", "v0", SetOptions{NX: true}, "v0", true, false, nil, "v0"},
		{"xx missing", "", SetOptions{XX: true}, "", false, false, nil, ""},
		{"xx present", "v0", SetOptions{XX: true}, "v0", true, true, nil, "new"},
		{"get", "v0", SetOptions{Get: true}, "v0", true, true, nil, "new"},
		{"get missing", "", SetOptions{Get: true}, "", false, true, nil, "new"},
		{"nx get present", "v0", SetOptions{NX: true, Get: true}, "v0", true, false, nil, "v0"},
		{"xx get missing", "", SetOptions{XX: true, Get: true}, "", false, false, nil, ""},
		{"over a stream", "stream", SetOptions{}, "", false, true, nil, "new"},
		{"nx over a stream", "stream", SetOptions{NX: true}, "", false, false, nil, "stream:2"},
		{"get over a stream", "stream", SetOptions{Get: true}, "", false, false, ErrWrongType, "stream:2"},
		{"already expired", "", SetOptions{ExpireAt: ksT0}, "", false, true, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKS(t)
			strState(k, c.state)
			err := k.e.Update(func(tx *Tx) error {
				old, hadOld, done, err := tx.Set(0, []byte("k"), []byte("new"), c.o)
				if string(old) != c.old || hadOld != c.hadOld || done != c.done {
					t.Errorf("SET = %q, %v, %v; want %q, %v, %v", old, hadOld, done, c.old, c.hadOld, c.done)
				}
				return err
			})
			if !errors.Is(err, c.err) {
				t.Fatalf("SET: %v; want %v", err, c.err)
			}
			var want []string
			if c.done {
				want = []string{"written 0 k"}
			}
			if ch := k.takeChanges(); !slices.Equal(ch, want) {
				t.Errorf("noted %v; want %v", ch, want)
			}
			if got := k.describe(0, "k"); got != c.after {
				t.Errorf("k = %q; want %q", got, c.after)
			}
			k.checkIndex()
			k.checkNoOrphanData()
		})
	}
}

func TestIncrBy(t *testing.T) {
	cases := []struct {
		state string
		delta int64
		want  int64
		err   error
	}{
		{"", 1, 1, nil},
		{"", -7, -7, nil},
		{"41", 1, 42, nil},
		{"-5", 10, 5, nil},
		{"9223372036854775806", 1, math.MaxInt64, nil},
		{"9223372036854775807", 1, 0, ErrOverflow},
		{"-9223372036854775807", -1, math.MinInt64, nil},
		{"-9223372036854775808", -1, 0, ErrOverflow},
		{"1", math.MinInt64, math.MinInt64 + 1, nil},
		{"-1", math.MinInt64, 0, ErrOverflow},
		{"0", math.MaxInt64, math.MaxInt64, nil},
		{"abc", 1, 0, ErrNotInteger},
		{"01", 1, 0, ErrNotInteger},
		{"+1", 1, 0, ErrNotInteger},
		{" 1", 1, 0, ErrNotInteger},
		{"1.5", 1, 0, ErrNotInteger},
		{"-0", 1, 0, ErrNotInteger},
		{"9223372036854775808", 1, 0, ErrNotInteger},
		{"stream", 1, 0, ErrWrongType},
	}
	for _, c := range cases {
		k := newKS(t)
		strState(k, c.state)
		err := k.e.Update(func(tx *Tx) error {
			n, err := tx.IncrBy(0, []byte("k"), c.delta)
			if err == nil && n != c.want {
				t.Errorf("%q INCRBY %d = %d; want %d", c.state, c.delta, n, c.want)
			}
			return err
		})
		if !errors.Is(err, c.err) {
			t.Errorf("%q INCRBY %d: %v; want %v", c.state, c.delta, err, c.err)
		}
		if c.err == nil {
			if got := k.describe(0, "k"); got != strconv.FormatInt(c.want, 10) {
				t.Errorf("%q INCRBY %d stored %q", c.state, c.delta, got)
			}
			if ch := k.takeChanges(); !slices.Equal(ch, []string{"written 0 k"}) {
				t.Errorf("noted %v", ch)
			}
		} else if ch := k.takeChanges(); len(ch) != 0 {
			t.Errorf("failed INCRBY noted %v", ch)
		}
	}
}

func TestIncrByFloat(t *testing.T) {
	// Expected replies from redis-server 7.0.15 (x86-64, long double).
	cases := []struct {
		state string
		delta float64
		want  string
		err   error
	}{
		{"", 1.5, "1.5", nil},
		{"10.5", 0.1, "10.6", nil},
		{"0.1", 0.2, "0.3", nil},
		{"1.1", 2.2, "3.3", nil},
		{"3.5", -3.5, "0", nil},
		{"1e20", 1, "100000000000000000000", nil},
		{"123456789.123456789", 0.000000001, "123456789.12345678999554366", nil},
		{"-5", 0.25, "-4.75", nil},
		{"1", 1e-17, "1.00000000000000001", nil},
		{"2", 3, "5", nil},
		{"0x10", 1, "17", nil},
		{"-1e-20", 0, "0", nil},
		{"", 1.5e-20, "0", nil},
		{"+5", 0, "5", nil},
		{".5", 0, "0.5", nil},
		{"5.", 0, "5", nil},
		{"017", 0, "17", nil},
		{"0x1p-2", 0, "0.25", nil},
		{"1e400", 1, "10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880", nil},
		{"1.7976931348623157e308", 1e308, "279769313486231570002352240441350078789299929179619934003987695617693370918830364684014944221042050987341155710361544171686148029276505307138777262321877129888036065002204239033812550598509174132739480498569620043582760541189365866551522561741435317031294527744011878159793174665688773926186886103199182225408", nil},
		{"0", 1e308, "99999999999999999996685879655845645660560099847415567207797047994921734868838061872100126921888539320446747225054013223152134749593960583597420814430196418767959100019603190778663109604507106667939153395788938914560543563061268364901618630217086589253444881623791300855757318142424510452728255046343928578048", nil},
		{"abc", 1, "", ErrNotFloat},
		{" 1", 1, "", ErrNotFloat},
		{"0b101", 1, "", ErrNotFloat},
		{"1_0", 1, "", ErrNotFloat},
		{"nan", 1, "", ErrNotFloat},
		{"1e5000", 1, "", ErrNotFloat},
		{"1e-5000", 1, "", ErrNotFloat},
		{"0x", 1, "", ErrNotFloat},
		{"inf", 1, "", ErrNaNOrInf},
		{"-Infinity", 1, "", ErrNaNOrInf},
		{"1", math.Inf(1), "", ErrNaNOrInf},
		{"1", math.NaN(), "", ErrNaNOrInf},
		{"stream", 1, "", ErrWrongType},
	}
	for _, c := range cases {
		k := newKS(t)
		strState(k, c.state)
		err := k.e.Update(func(tx *Tx) error {
			v, err := tx.IncrByFloat(0, []byte("k"), c.delta)
			if err == nil && string(v) != c.want {
				t.Errorf("%q INCRBYFLOAT %v = %s; want %s", c.state, c.delta, v, c.want)
			}
			return err
		})
		if !errors.Is(err, c.err) {
			t.Errorf("%q INCRBYFLOAT %v: %v; want %v", c.state, c.delta, err, c.err)
		}
		if c.err == nil && k.describe(0, "k") != c.want {
			t.Errorf("%q INCRBYFLOAT %v stored %q", c.state, c.delta, k.describe(0, "k"))
		}
	}
}

func TestAppend(t *testing.T) {
	cases := []struct {
		state, add string
		want       int64
		after      string
		err        error
	}{
		{"", "abc", 3, "abc", nil},
		{"abc", "def", 6, "abcdef", nil},
		{"abc", "", 3, "abc", nil},
		{"", "", 0, "", nil}, // creates an empty string
		{"stream", "x", 0, "stream:2", ErrWrongType},
	}
	for _, c := range cases {
		k := newKS(t)
		strState(k, c.state)
		err := k.e.Update(func(tx *Tx) error {
			n, err := tx.Append(0, []byte("k"), []byte(c.add))
			if err == nil && n != c.want {
				t.Errorf("%q APPEND %q = %d; want %d", c.state, c.add, n, c.want)
			}
			return err
		})
		if !errors.Is(err, c.err) {
			t.Errorf("%q APPEND %q: %v", c.state, c.add, err)
		}
		if got := k.describe(0, "k"); got != c.after {
			t.Errorf("%q APPEND %q left %q", c.state, c.add, got)
		}
		if c.err == nil {
			k.view(func(tx *Tx) error {
				if ok, _ := tx.Exists(0, []byte("k")); !ok {
					t.Errorf("%q APPEND %q: key missing", c.state, c.add)
				}
				return nil
			})
		}
	}
}

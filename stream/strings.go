package stream

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/storage"
)

// String commands. A string lives in its metadata record's Body as
// hint:u8 | value; it has no data records and no version. The hint keeps
// what OBJECT ENCODING reports when Redis decides it from the command that
// wrote the value rather than from the value itself.

// String encoding hints. On-disk format: never renumbered.
const (
	hintByValue byte = 0 // int, embstr or raw, decided from the value (SET)
	hintRaw     byte = 1 // always raw (APPEND)
	hintEmbstr  byte = 2 // embstr up to 44 bytes, else raw (INCRBYFLOAT)
)

// splitString returns the hint and value of a string's Body.
func splitString(body []byte) (hint byte, value []byte) {
	if len(body) == 0 {
		return hintByValue, nil
	}
	return body[0], body[1:]
}

// Errors of string commands. The server maps each to Redis's text.
var (
	// ErrNotInteger: the value is not the canonical form of an int64.
	ErrNotInteger = errors.New("stream: value is not an integer or out of range")
	// ErrOverflow: INCRBY/DECRBY would leave the int64 range.
	ErrOverflow = errors.New("stream: increment or decrement would overflow")
	// ErrNotFloat: the value is not a valid float (INCRBYFLOAT).
	ErrNotFloat = errors.New("stream: value is not a valid float")
	// ErrNaNOrInf: INCRBYFLOAT would produce NaN or Infinity.
	ErrNaNOrInf = errors.New("stream: increment would produce NaN or Infinity")
	// ErrTooLarge: APPEND would grow a string past MaxStringLen.
	ErrTooLarge = errors.New("stream: string exceeds maximum allowed size")
)

// MaxStringLen is the longest string APPEND builds: Redis's default
// proto-max-bulk-len, which checkStringLength enforces.
const MaxStringLen = 512 << 20

// SetOptions are SET's options.
type SetOptions struct {
	NX, XX  bool // only if missing / only if present
	Get     bool // return the old value; an old stream is ErrWrongType
	KeepTTL bool // keep the old expiry instead of clearing it
	// ExpireAt is the new expiry in unix ms; 0 for none. A time already
	// past is stored anyway: the key reads as missing from then on, as
	// Redis's SET ... PXAT does.
	ExpireAt int64
}

// lookupString is lookup for a command that needs a string: a stream is
// ErrWrongType.
func (tx *Tx) lookupString(db int, key []byte) (storage.Meta, bool, error) {
	m, ok, err := tx.lookup(db, key)
	if err == nil && ok && m.Type != storage.TypeString {
		return m, ok, ErrWrongType
	}
	if ok {
		_, m.Body = splitString(m.Body)
	}
	return m, ok, err
}

// putString stores a string value over old (nil when the key was
// missing), dropping an old stream's data, and notes the write.
func (tx *Tx) putString(db int, key []byte, m *storage.Meta, old *storage.Meta) error {
	if old != nil && old.Type != storage.TypeString {
		if err := tx.dropKey(db, key, old); err != nil {
			return err
		}
		old = nil
	}
	if err := tx.putMeta(db, key, m, old); err != nil {
		return err
	}
	tx.note(Written, db, key)
	return nil
}

// Get returns key's value; ok is false for a missing key.
func (tx *Tx) Get(db int, key []byte) ([]byte, bool, error) {
	m, ok, err := tx.lookupString(db, key)
	if err != nil || !ok {
		return nil, false, err
	}
	return m.Body, true, nil
}

// Set stores value under key, replacing a value of any type (a stream's
// data is dropped). done reports whether it wrote (NX and XX can prevent
// it). old and hadOld are the previous string value; with o.Get an
// existing stream is ErrWrongType and nothing is written.
func (tx *Tx) Set(db int, key, value []byte, o SetOptions) (old []byte, hadOld bool, done bool, err error) {
	m, exists, err := tx.lookup(db, key)
	if err != nil {
		return nil, false, false, err
	}
	if exists && m.Type == storage.TypeString {
		_, old = splitString(m.Body)
		hadOld = true
	}
	if o.Get && exists && !hadOld {
		return nil, false, false, ErrWrongType
	}
	if (o.NX && exists) || (o.XX && !exists) {
		return old, hadOld, false, nil
	}
	nm := storage.Meta{Type: storage.TypeString, ExpireAt: o.ExpireAt, Body: stringBody(hintByValue, value)}
	var prev *storage.Meta
	if exists {
		prev = &m
		if o.KeepTTL {
			nm.ExpireAt = m.ExpireAt
		}
	}
	if err := tx.putString(db, key, &nm, prev); err != nil {
		return nil, false, false, err
	}
	return old, hadOld, true, nil
}

// IncrBy adds delta to the integer stored at key (0 when missing) and
// returns the result. The TTL is kept.
func (tx *Tx) IncrBy(db int, key []byte, delta int64) (int64, error) {
	m, ok, err := tx.lookupString(db, key)
	if err != nil {
		return 0, err
	}
	var cur int64
	if ok {
		if cur, ok = parseInt(m.Body); !ok {
			return 0, ErrNotInteger
		}
	}
	if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
		return 0, ErrOverflow
	}
	n := cur + delta
	if err := tx.putUpdated(db, key, &m, ok, hintByValue, strconv.AppendInt(nil, n, 10)); err != nil {
		return 0, err
	}
	return n, nil
}

// putUpdated stores body as the new value of a string read as m (existed
// says whether it did), keeping its TTL.
func (tx *Tx) putUpdated(db int, key []byte, m *storage.Meta, existed bool, hint byte, body []byte) error {
	nm := storage.Meta{Type: storage.TypeString, Body: stringBody(hint, body)}
	var prev *storage.Meta
	if existed {
		nm.ExpireAt = m.ExpireAt
		prev = m
	}
	return tx.putString(db, key, &nm, prev)
}

// Redis computes INCRBYFLOAT in C long double, which on x86-64 is the x87
// 80-bit format: a 64-bit significand and a 15-bit exponent. big.Float
// with 64 bits of precision rounds like it; the exponent range is checked
// by hand.
const (
	longDoublePrec   = 64
	longDoubleMaxExp = 16384  // |x| < 2**16384
	longDoubleMinExp = -16444 // smallest subnormal is 2**-16445
)

// parseLongDouble parses s as Redis's string2ld (strtold) does: decimal or
// hex floats, "inf"; no spaces, NaN or out-of-range values.
func parseLongDouble(s []byte) (*big.Float, bool) {
	if len(s) == 0 || strings.ContainsAny(string(s), " \t\n\v\f\r_") {
		return nil, false
	}
	unsigned := strings.TrimLeft(string(s), "+-")
	if len(s)-len(unsigned) > 1 {
		return nil, false
	}
	switch strings.ToLower(unsigned) {
	case "inf", "infinity":
		return new(big.Float).SetInf(s[0] == '-'), true
	}
	if len(unsigned) > 1 && unsigned[0] == '0' && strings.ContainsRune("bBoO", rune(unsigned[1])) {
		return nil, false // big.Float reads these prefixes; strtold does not
	}
	f, _, err := new(big.Float).SetPrec(longDoublePrec).Parse(string(s), 0)
	if err != nil {
		return nil, false
	}
	if !f.IsInf() && f.Sign() != 0 {
		if e := f.MantExp(nil); e > longDoubleMaxExp || e < longDoubleMinExp {
			return nil, false
		}
	}
	return f, true
}

// IncrByFloat adds delta to the number stored at key (0 when missing) and
// returns the result as Redis formats it: fixed-point with 17 decimals,
// trailing zeros trimmed. The TTL is kept. Redis parses the increment as
// a long double; delta arrives as a float64, so it is taken as the
// shortest decimal that reads back as delta, which is what the client
// typed whenever it typed at most 17 significant digits.
func (tx *Tx) IncrByFloat(db int, key []byte, delta float64) ([]byte, error) {
	m, ok, err := tx.lookupString(db, key)
	if err != nil {
		return nil, err
	}
	cur := new(big.Float).SetPrec(longDoublePrec)
	if ok {
		var valid bool
		if cur, valid = parseLongDouble(m.Body); !valid {
			return nil, ErrNotFloat
		}
	}
	if math.IsNaN(delta) || math.IsInf(delta, 0) || cur.IsInf() {
		return nil, ErrNaNOrInf
	}
	d, _ := parseLongDouble(strconv.AppendFloat(nil, delta, 'g', -1, 64))
	if d == nil {
		d = new(big.Float).SetPrec(longDoublePrec)
	}
	sum := new(big.Float).SetPrec(longDoublePrec).Add(cur, d)
	if sum.Sign() != 0 && sum.MantExp(nil) > longDoubleMaxExp {
		return nil, ErrNaNOrInf
	}
	out := formatLongDouble(sum)
	if err := tx.putUpdated(db, key, &m, ok, hintEmbstr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// formatLongDouble formats f as Redis's ld2string in human mode: "%.17Lf"
// with trailing zeros (and a trailing point) removed.
func formatLongDouble(f *big.Float) []byte {
	b := f.Append(nil, 'f', 17)
	if i := strings.IndexByte(string(b), '.'); i >= 0 {
		b = []byte(strings.TrimRight(string(b), "0"))
		b = []byte(strings.TrimSuffix(string(b), "."))
	}
	if string(b) == "-0" {
		b = []byte("0")
	}
	return b
}

// Append appends value to key's string (creating it) and returns the new
// length. The TTL is kept.
func (tx *Tx) Append(db int, key, value []byte) (int64, error) {
	m, ok, err := tx.lookupString(db, key)
	if err != nil {
		return 0, err
	}
	var cur []byte
	if ok {
		cur = m.Body
	}
	if len(cur)+len(value) > MaxStringLen {
		return 0, ErrTooLarge
	}
	body := make([]byte, 0, len(cur)+len(value))
	body = append(append(body, cur...), value...)
	// Redis stores APPEND to a missing key as SET would; growing an
	// existing string makes it raw.
	hint := hintRaw
	if !ok {
		hint = hintByValue
	}
	if err := tx.putUpdated(db, key, &m, ok, hint, body); err != nil {
		return 0, err
	}
	return int64(len(body)), nil
}

// StrLen returns the length of key's string, 0 when missing.
func (tx *Tx) StrLen(db int, key []byte) (int64, error) {
	m, ok, err := tx.lookupString(db, key)
	if err != nil || !ok {
		return 0, err
	}
	return int64(len(m.Body)), nil
}

// GetDel returns key's value and deletes the key.
func (tx *Tx) GetDel(db int, key []byte) ([]byte, bool, error) {
	m, ok, err := tx.lookupString(db, key)
	if err != nil || !ok {
		return nil, false, err
	}
	if err := tx.dropKey(db, key, &m); err != nil {
		return nil, false, err
	}
	tx.note(Deleted, db, key)
	return m.Body, true, nil
}

// stringBody encodes a string's Body.
func stringBody(hint byte, value []byte) []byte {
	b := make([]byte, 0, 1+len(value))
	return append(append(b, hint), value...)
}

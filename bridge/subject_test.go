package bridge

import "testing"

func TestSubjectMatches(t *testing.T) {
	cases := []struct {
		filter, subject string
		want            bool
	}{
		{"a.b", "a.b", true},
		{"a.b", "a.c", false},
		{"a.b", "a.b.c", false},
		{"a.b.c", "a.b", false},
		{"a.*", "a.b", true},
		{"a.*", "a", false},
		{"a.*", "a.b.c", false},
		{"*.b", "a.b", true},
		{"a.>", "a.b", true},
		{"a.>", "a.b.c", true},
		{"a.>", "a", false},
		{">", "a", true},
		{">", "a.b.c", true},
		{"*", "a", true},
		{"*", "a.b", false},
		{"a.*.c", "a.x.c", true},
		{"a.*.c", "a.x.d", false},
		{"orders", "orders", true},
		{"orders", "", false},
	}
	for _, c := range cases {
		if got := subjectMatches(c.filter, []byte(c.subject)); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", c.filter, c.subject, got, c.want)
		}
	}
}

func TestSubjectFilterLiteral(t *testing.T) {
	for _, c := range []struct {
		filter  string
		literal bool
	}{
		{"orders", true},
		{"a.b.c", true},
		{"a.*", false},
		{"a.>", false},
		{">", false},
		{"*.b", false},
		{"a*.b", true}, // "*" is a wildcard only as a whole token
	} {
		got, ok := subjectFilter(c.filter).Literal()
		if ok != c.literal || (ok && string(got) != c.filter) {
			t.Errorf("subjectFilter(%q).Literal() = %q, %v; want literal %v", c.filter, got, ok, c.literal)
		}
	}
	if engineFilter("") != nil {
		t.Error(`engineFilter("") is not nil: the engine would not read every entry`)
	}
}

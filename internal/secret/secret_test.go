package secret

import (
	"strings"
	"testing"
)

func TestTokenAndProofAreApart(t *testing.T) {
	s := New()
	if len(s) != 2*Size || s == New() {
		t.Fatalf("secret %q: want %d fresh hex digits", s, 2*Size)
	}
	c := NewChallenge()
	if !ValidChallenge(c) {
		t.Fatalf("a fresh challenge %q is not valid", c)
	}
	tok, proof := Token(s), Proof(s, c, true)
	if tok == s || proof == s || tok == proof || strings.Contains(tok, s) {
		t.Fatal("the token or the proof gives the secret away")
	}
	if Proof(s, c, false) == proof || Proof(s, NewChallenge(), true) == proof || Proof(New(), c, true) == proof {
		t.Fatal("a proof does not depend on the claim, the challenge and the secret")
	}
}

func TestAuthorized(t *testing.T) {
	s := New()
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{Authorization(s), true},
		{"bearer " + Token(s), true},
		{"Bearer " + Token(s) + " ", true},
		{"", false},
		{"Bearer", false},
		{"Bearer " + s, false}, // the secret itself is not the token
		{"Basic " + Token(s), false},
		{"Bearer " + Token(New()), false},
		{"Bearer " + Token(s)[:10], false},
	} {
		if got := Authorized(tc.header, s); got != tc.want {
			t.Errorf("Authorized(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
	if Authorized(Authorization(""), "") {
		t.Error("an empty secret authorizes")
	}
}

func TestProves(t *testing.T) {
	s, c := New(), NewChallenge()
	if !Proves(Proof(s, c, true), s, c, true) {
		t.Fatal("a proof does not prove")
	}
	if Proves(Proof(s, c, false), s, c, true) {
		t.Fatal("a not-leaseholder proof proves a leaseholder")
	}
	if Proves(Proof("", c, true), "", c, true) || Proves(Proof(s, "", true), s, "", true) {
		t.Fatal("an empty secret or challenge proves")
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 32), strings.Repeat("a", 31), strings.Repeat("a", 130)} {
		if ValidChallenge(bad) {
			t.Errorf("ValidChallenge(%q) = true", bad)
		}
	}
}

package wire

import "testing"

// A string id is exact when Go reads it back as its client wrote it.
func TestAStringIdIsExactWhenItIsUnicodeText(t *testing.T) {
	for lit, want := range map[string]bool{
		`"a"`: true, `"é"`: true, `5`: true, `"\ufffd"`: true, "\"\uFFFD\"": true,
		`"\ud83d\ude00"`: true, `"\uD83D\uDE00x"`: true, `"\\ud800"`: true, `"\\\"\u0041"`: true,
		`"\ud800"`: false, `"\udc00x"`: false, `"\ud800\u0041"`: false, `"x\ud83d"`: false,
		`"\"\ud800"`: false, "\"a\xffb\"": false, "\"\xed\xa0\x80\"": false,
	} {
		if got := exactString([]byte(lit)); got != want {
			t.Errorf("exactString(%s) = %v, want %v", lit, got, want)
		}
	}
}

//go:build !darwin && !windows

package browser

import "testing"

// Without an X or Wayland display nothing is opened, and that is no error:
// `board` then prints its link only.
func TestNothingIsOpenedWithoutADisplay(t *testing.T) {
	t.Setenv("BROWSER", "")
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	opened, err := Open("http://127.0.0.1:1/board")
	if opened || err != nil {
		t.Fatalf("without a display Open answered %v, %v", opened, err)
	}
}

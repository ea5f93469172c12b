//go:build browser

// Package browser proves the board page in a real browser: headless
// Chromium (Debian's chromium and chromium-driver) driven over WebDriver,
// against the built binary serving a checkout, with real clients attached
// over real pipes. It builds only with the tag browser
// (`go test -tags browser ./scenarios/browser`), so that `go test ./...`
// on a machine without Chromium compiles nothing of it.
//
// BOARD_SCREENSHOT=path writes a screenshot of the whole page there, at
// 1280 pixels wide (the README's docs/board.png is made so).
package browser

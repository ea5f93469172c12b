// Package board is the board page, a read-only page for a person that the
// shared HTTP server mounts at /board: its files (assets/, embedded: HTML,
// CSS and a script, under the policy default-src 'self'), its JSON
// endpoints under /board/api (the [Source]'s bytes as they are, and an
// OpenAPI 3.1 document of them) and /board/events, a server-sent "change"
// event whenever the source's revision moves, which the page answers by
// fetching again. The stream waits on the source's channel (package
// surface counts its changes) and reads the revision at every keep-alive
// too, for what the source does not signal; it ends with its request,
// which the server ends at its shutdown.
//
// Nothing is read without a key (401, on a small page for a browser's
// navigation): the cookie the one-time link gives, or the lease's token
// (a script's). POST /board/token gives whoever holds
// the lease's token a one-time token; GET /board?token= spends it, once
// and within two minutes, for an HttpOnly, SameSite=Strict cookie on
// Path=/board named after the server's port, and redirects to /board
// without it. Sec-Fetch-Site must be same-origin or none (403); Host and
// Origin are the server's to check. Every refusal is the server's JSON
// error body; a method a path does not serve is 405, with Allow.
package board

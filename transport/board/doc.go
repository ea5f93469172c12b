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
// Nothing of the board is read without a key in Authorization (401, on a
// small page for a browser's navigation): the key a one-time link gives
// (a page's), or the lease's token (a script's); the page's own files,
// which hold nothing of it, are anyone's. POST /board/token gives whoever
// holds the lease's token a one-time token; GET /board?token= answers the
// page while the token waits, and the page's script takes the token off
// the address and spends it (POST /board/key?token=), once and within two
// minutes, for a key that it keeps in sessionStorage. The key is never in
// an address, and so in no history, and never a cookie: browsers send
// cookies to every port of a host, and so to any other server of
// 127.0.0.1 a page asks, while sessionStorage is this origin's, port and
// all, and sends nothing by itself. Sec-Fetch-Site must be same-origin or
// none (403); Host and Origin are the server's to check. Every refusal is
// the server's JSON error body; a method a path does not serve is 405,
// with Allow.
package board

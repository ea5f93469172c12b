// Package layer reads a checkout's .ai/ layer as data: it finds the
// checkout, validates its manifest, and indexes the Markdown objects under
// .ai/repo for the MCP tools and resources that serve them.
//
// # Model
//
// A checkout is the nearest ancestor of a start directory holding
// .ai/manifest.yaml ([FindCheckout]). The manifest ([LoadManifest]) must say
// schema: ai-repository/v1; besides the layer format's own sections (repo,
// local, sections, context, accepted and not interpreted) this package reads
// mcp.profiles (the fleet roster) and server (timing overrides, in seconds).
// Any other top-level key, or any unknown key inside mcp or server, makes the
// manifest invalid ([ErrInvalidManifest]).
//
// An object is a *.md file under .ai/repo (recursively; dot-files and
// dot-directories are skipped; .ai/repo itself may be a symbolic link, links
// to directories below it are not followed, a link to a file is that file,
// wherever it is, and watched there) that starts with a "---" line, a YAML front matter mapping and a
// closing "---" line. The front matter holds at least a string id and a
// string kind; its URI is majordomus://<kind>/<id>@<version>, "@<version>"
// only when version is set. An [Index] ([Build]) is an immutable snapshot of
// all objects plus diagnostics about the files that are not objects. It
// carries the checkout's name: the manifest's name when the caller gives it
// ([Config.Name]), else the root directory's.
//
// An object of kind prompt ([KindPrompt]) may declare arguments in its
// front matter, a list of {name, description, required, suggestions}
// ([Argument]); [Object.Render] fills its body's {{name}} placeholders in
// with their values, copied as they are: a value is data, never read for
// placeholders or anything else. The text filled in is bounded
// ([MaxPromptBytes]).
//
// A number where text is read (a version, a title, a tag, a suggestion)
// reads as it is written: 3.10 is "3.10", not "3.1".
//
// # What degrades
//
// Error diagnostics leave a file out and make the index "degraded"; it is
// still served unless [Config.Strict]. They come from: front matter that is
// not valid YAML, not a mapping, or not closed; a missing or empty id or
// kind; a kind not matching ^[a-z][a-z0-9_-]*$; an id or version that cannot
// sit in a URI ('/', '@', '?', '#', '%', any whitespace, control or
// format character, a character never drawn — a variation selector, a
// filler —, text not in its composed form (NFC), or only "." or "..");
// a version that is neither a string nor a number; a second file claiming
// a URI already taken by a file earlier in path order; a file that cannot be read or is over 8
// MiB, or whose front matter is over 256 KiB or holds a second YAML
// document; .ai/repo existing but not being a directory, or leading into
// .ai/local.
//
// Warnings leave the state "ok": a .md file with no front matter (not an
// object), .ai/repo being absent (the index is empty), a title, description
// or status that is not text, tags that are not text, a prompt's argument
// declaration that cannot be read (not a mapping, a name not matching
// ^[A-Za-z][A-Za-z0-9_-]*$ or declared twice, an unknown key, required not
// a boolean), a dangling symbolic link, a link (or .ai/repo's own) that
// leads into .ai/local, a file named .MD or .Md (only .md files are read). The object keeps what could be read. A file or directory gone
// between the listing and its reading is simply not there.
//
// # Invariants
//
//   - Read-only: nothing in this package writes a file, anywhere.
//   - .ai/local is never read: only .ai/repo is scanned, and what leads
//     from there into .ai/local, wherever it really is, is skipped.
//   - An Index is never modified after Build returns; [Layer.Current] hands
//     out indexes that may be shared between goroutines.
//   - Generations are monotonic: [Open] serves generation 1, each index
//     [Layer.Watch] publishes carries the current generation + 1, and
//     [Layer.Continue] only raises the current one's. An index
//     is published only when its objects (front matter, body, path) or its
//     diagnostics differ from the current one's, so a no-op write never
//     bumps the generation.
//   - What changes on disk is served: heard by a watch, or, where the
//     system will not watch (its watches used up), found by a rescan,
//     which [Layer.Withheld] says while it lasts.
//   - Under Strict a degraded index is never served: Open fails with
//     [ErrDegraded] and a degraded rebuild is dropped, the previous index
//     staying current.
//   - Objects are sorted by URI, diagnostics by path then message, search
//     hits by score then URI: the same files always give the same answers.
//   - A search reads every object's lower-cased text, laid out in one block
//     in URI order as each index is built, so that its cost per object
//     does not grow with the layer (B7).
package layer

// Package imports holds no code: its tests check the module's import
// rules, which say which packages of this module each package may import,
// and which other imports it must never use, directly or through any
// package it depends on.
//
// The rules (each says why, and a failure prints it):
//   - machine, registry and transport are leaves that do not import each
//     other; internal/node wires them together, with layer, surface, fleet
//     and the runtime registry; transport's sides (stdio, httpserver,
//     bridge) import only its carry and wire, never one another;
//   - cmd/majordomus-mcp is the command line around internal/node: of this
//     module it imports only internal/node, internal/demo,
//     internal/release, internal/logging and machine (for graph);
//   - machine reaches nothing of this module; fleet, internal/release and
//     internal/secret depend on the standard library alone;
//   - any package's tests may also import the test fixtures (example,
//     internal/mcpclient, internal/testtemp, internal/testchild).
//
// TestNoFileIsForOneArchitecture checks that no file tells one GOARCH
// from another (CI vets and compiles the tests for amd64 alone).
//
// TestImportRules checks every file's imports, TestTransitiveDependencies
// every package's whole dependency graph on linux, darwin and windows, and
// TestThePackagePictureIsTheRule that the picture of the packages
// (cmd/majordomus-mcp → internal/node → …, in README.md or a page of
// docs/) draws what the rules say.
package imports

// Command majordomus-mcp serves a checkout's .ai/ layer over MCP to every
// agent working in it. Every MCP client spawns it over stdio; see README.md.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

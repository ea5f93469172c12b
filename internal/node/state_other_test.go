//go:build !unix

package node

// unreadableStateCases: no named pipe or symbolic link is planted here
// (a Windows link needs a privilege a test cannot count on).
var unreadableStateCases []stateCase

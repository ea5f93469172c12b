package main

import (
	"reflect"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
)

func TestParseRoster(t *testing.T) {
	got, err := parseRoster(" author, review ,merge")
	want := []fleet.Configured{{Profile: "author"}, {Profile: "review"}, {Profile: "merge"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseRoster = %+v %v", got, err)
	}
	for _, bad := range []string{"a,,b", "a,a", "a b", ".hidden"} {
		if _, err := parseRoster(bad); err == nil {
			t.Errorf("parseRoster(%q) accepted", bad)
		}
	}
}

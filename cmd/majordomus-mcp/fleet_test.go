package main

import (
	"reflect"
	"testing"

	"majordomus-mcp/fleet"
	"majordomus-mcp/layer"
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

func TestRosterOfTheManifest(t *testing.T) {
	if got := rosterOf(layer.Manifest{}); !reflect.DeepEqual(got, []fleet.Configured{{Profile: "default", RoleKnown: true}}) {
		t.Errorf("no profiles: %+v", got)
	}
	m := layer.Manifest{Profiles: []layer.Profile{{Name: "author", Role: "writer"}, {Name: "review"}}}
	want := []fleet.Configured{{Profile: "author", Role: "writer", RoleKnown: true}, {Profile: "review", RoleKnown: true}}
	if got := rosterOf(m); !reflect.DeepEqual(got, want) {
		t.Errorf("rosterOf = %+v", got)
	}
	if profileRole(m, "author") != "writer" || profileRole(m, "other") != "" {
		t.Error("profileRole")
	}
}

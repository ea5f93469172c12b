package node

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
)

func TestParseRoster(t *testing.T) {
	got, err := ParseRoster(" author, review ,merge")
	want := []fleet.Configured{{Profile: "author"}, {Profile: "review"}, {Profile: "merge"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRoster = %+v %v", got, err)
	}
	if got, err := ParseRoster(""); got != nil || err != nil {
		t.Errorf(`ParseRoster("") = %+v %v; want none, the manifest's`, got, err)
	}
	for _, bad := range []string{"a,,b", "a,a", "a b", ".hidden"} {
		if _, err := ParseRoster(bad); err == nil {
			t.Errorf("ParseRoster(%q) accepted", bad)
		}
	}
}

// The command line's inventory is of the manifest's roster unless it
// names one, answered by "cli", and it creates no registry.
func TestFleetOfNoServers(t *testing.T) {
	co := exampleCheckout(t)
	inv := Fleet(context.Background(), co, nil)
	if !slices.Equal(inv.Roster, []string{"default"}) || len(inv.MissingMembers) != 1 || inv.MissingMembers[0].Profile != "default" {
		t.Errorf("the inventory's roster is %v, missing %+v; want the manifest's default, missing", inv.Roster, inv.MissingMembers)
	}
	if inv.MutationGateSatisfied || inv.AnsweringNamespace != "cli" || inv.Registry != co.Registry {
		t.Errorf("the inventory is %+v; want its gate closed, answered by cli from %s", inv, co.Registry)
	}
	roster, err := ParseRoster("author,review")
	if err != nil {
		t.Fatal(err)
	}
	if inv := Fleet(context.Background(), co, roster); !slices.Equal(inv.Roster, []string{"author", "review"}) || len(inv.MissingMembers) != 2 {
		t.Errorf("with a roster given, the inventory's is %v, missing %+v", inv.Roster, inv.MissingMembers)
	}
	if _, err := os.Stat(co.Registry); !os.IsNotExist(err) {
		t.Errorf("the inventory made the registry (%v): it must write nothing", err)
	}
}

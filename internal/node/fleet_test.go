package node

import (
	"context"
	"os"
	"path/filepath"
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
	f := Flags{Repo: co.Root, Registry: co.Registry}
	inv, err := Fleet(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	if inv, _ := Fleet(context.Background(), f, roster); !slices.Equal(inv.Roster, []string{"author", "review"}) || len(inv.MissingMembers) != 2 {
		t.Errorf("with a roster given, the inventory's is %v, missing %+v", inv.Roster, inv.MissingMembers)
	}
	if _, err := os.Stat(co.Registry); !os.IsNotExist(err) {
		t.Errorf("the inventory made the registry (%v): it must write nothing", err)
	}
}

// A manifest that does not read costs the command line's inventory its
// roster, as it does a server's: the inventory is taken and says
// roster_unreadable, unless --roster names the roster.
func TestFleetOfAnUnreadableManifest(t *testing.T) {
	co := exampleCheckout(t)
	if err := os.WriteFile(filepath.Join(co.Root, ".ai", "manifest.yaml"), []byte("mcp: {profiles: 7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := Flags{Repo: co.Root, Registry: co.Registry}
	inv, err := Fleet(context.Background(), f, nil)
	if err != nil {
		t.Fatalf("no inventory: %v", err)
	}
	if inv.InventoryComplete || len(inv.IncompleteReasons) == 0 || inv.IncompleteReasons[0].Code != fleet.RosterUnreadable {
		t.Errorf("the inventory says %+v; want it incomplete, its roster unreadable", inv.IncompleteReasons)
	}
	roster, _ := ParseRoster("author")
	if inv, _ := Fleet(context.Background(), f, roster); !inv.InventoryComplete || !slices.Equal(inv.Roster, []string{"author"}) {
		t.Errorf("with --roster, the inventory is complete %v, of %v; want complete, of author", inv.InventoryComplete, inv.Roster)
	}
}

package registry

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSelf(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatalf("Self: %v", err)
	}
	if self.PID != os.Getpid() || self.Start == 0 || self.BootID == "" || self.Host == "" {
		t.Errorf("Self = %+v", self)
	}
	if !filepath.IsAbs(self.Executable.Path) || self.Executable.Size == 0 || self.Executable.MTime == 0 {
		t.Errorf("Self executable = %+v", self.Executable)
	}
}

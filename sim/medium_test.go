package sim

import "testing"

func TestMediumSpellsTheEngineString(t *testing.T) {
	for _, c := range []struct {
		m    Medium
		want string
	}{{MediumGPU, "GPU"}, {MediumCPU, "CPU"}, {MediumCPUPinned, "CPU_PINNED"}, {MediumDisk, "DISK"}, {Medium(99), "UNKNOWN"}} {
		if got := c.m.String(); got != c.want {
			t.Errorf("Medium(%d) = %q, want %q", c.m, got, c.want)
		}
	}
}

//go:build !unix

package cli

// descriptorBudget: no descriptor limit to read here; --max-conns decides.
func descriptorBudget() int { return 1 << 30 }

package sessionstore

import "sort"

// DriverNames lists the dialects the store has a driver for (tests only).
func DriverNames() []string {
	var out []string
	for n := range drivers {
		out = append(out, n.String())
	}
	sort.Strings(out)
	return out
}

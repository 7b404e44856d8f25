package bench

import (
	"fmt"
	"strings"
)

// Target is one of the performance targets (issues 28 and 45) as this run
// measured it. Met is nil when the run did not measure it (a part left
// out, no --peer).
type Target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      *bool  `json:"met,omitempty"`
	// Note says what the ratio divides by (a floor's definition), why a
	// target was not measured, or where this run's figures put the
	// difference; printed as it is.
	Note string `json:"note,omitempty"`
}

// Targets are the targets, in one table, from one run's figures: the same
// rows remstore bench prints and docs/performance.md keeps.
func Targets(ws []Result, conc []ConcResult, http []HTTPResult) []Target {
	work := map[string]Result{}
	for _, r := range ws {
		work[r.Name] = r
	}
	var out []Target
	add := func(name, goal string, measured float64, ok, known bool, format string) {
		t := Target{Name: name, Goal: goal, Measured: "-"}
		if known {
			t.Measured = fmt.Sprintf(format, measured)
			t.Met = &ok
		}
		out = append(out, t)
	}
	note := func(s string, a ...any) { out[len(out)-1].Note = fmt.Sprintf(s, a...) }
	// The pydantic-ai load of each agent session beside its plain load,
	// which is its floor (the two take turns).
	for _, r := range ws {
		if n, ok := strings.CutSuffix(r.Name, ": load as pydantic-ai"); ok && r.FloorMS > 0 {
			add(n+" as pydantic-ai / plain", "<= 1.50x", r.RatioFloor, r.RatioFloor <= 1.5, true, "%.2fx")
			note("against %s: %.3f ms; the pydantic-ai load %.3f", r.FloorDef, r.FloorMS, r.MedianMS)
		}
	}
	if len(out) == 0 {
		add("agent session as pydantic-ai / plain", "<= 1.50x", 0, false, false, "")
	}
	// A Go agent's history each model call beside the same request in
	// memory (built with the sdkbench tag only).
	sdk := len(out)
	for _, r := range ws {
		if strings.HasPrefix(r.Name, "Go SDK turn") && !strings.HasSuffix(r.Name, ": the load") && r.FloorMS > 0 {
			add(r.Name+" / in-memory marshal", "<= 1.50x", r.RatioFloor, r.RatioFloor <= 1.5, true, "%.2fx")
			note("against %s: %.3f ms; the turn %.3f", r.FloorDef, r.FloorMS, r.MedianMS)
			if l, ok := work[r.Name+": the load"]; ok && l.FloorMS > 0 {
				out[len(out)-1].Note += fmt.Sprintf(", its load %.3f (the rows in native pgx %.3f)", l.MedianMS, l.FloorMS)
			}
		}
	}
	if len(out) == sdk {
		add("Go SDK turn / in-memory marshal", "<= 1.50x", 0, false, false, "")
		if _, ran := work["load+compress 10"]; ran { // the workloads ran, without the turn
			note("a build with -tags sdkbench measures it (make bench does)")
		}
	}
	for _, c := range []struct {
		name string
		max  float64
	}{{"load+compress 10", 1.2}, {"load+compress 1000", 1.1}} {
		r, ok := work[c.name]
		add(c.name+" / one-SELECT floor", fmt.Sprintf("<= %.2fx", c.max), r.RatioFloor, r.RatioFloor <= c.max, ok && r.FloorMS > 0, "%.2fx")
		if r.FloorMS > 0 {
			note("against %s: %.3f ms", r.FloorDef, r.FloorMS)
		}
		if h, ok := work[c.name+", history floor"]; ok && h.FloorMS > 0 {
			out[len(out)-1].Note += fmt.Sprintf("; %.2fx a floor that builds the same history (%s: %.3f ms)", h.RatioFloor, h.FloorDef, h.FloorMS)
		}
	}
	if small, large, x, ok := SweepRatio(ws); ok {
		add(fmt.Sprintf("a turn into %s / into %s", strings.TrimPrefix(large.Name, "store turn into "), strings.TrimPrefix(small.Name, "store turn into ")),
			"<= 1.20", x, x <= 1.2, true, "%.2f")
	} else {
		add("a turn into the largest session / the smallest", "<= 1.20", 0, false, false, "")
	}
	scaleTargets(ws, add)
	for _, h := range []string{"store a turn", "load 1000"} {
		var r *HTTPResult
		for i := range http {
			if http[i].Name == h {
				r = &http[i]
			}
		}
		add("serve / library: "+h, ">= 90%", ratio(r, func(r *HTTPResult) float64 { return 100 * r.Ratio }), r != nil && r.Ratio >= 0.9, r != nil, "%.0f%%")
		if r != nil && r.BareRatio > 0 {
			// What HTTP itself costs here: the bare handler in the same slots.
			note("a bare net/http handler (read, decode, call the library, answer) in the same slots: %.0f%% of the library; serve %.0f%% of the bare handler",
				100*r.BareRatio, 100*r.ServeOverBare)
		}
	}
	var own *ConcResult
	for i := range conc {
		if conc[i].Writers == 32 && !conc[i].Shared {
			own = &conc[i]
		}
	}
	add("32 writers, own sessions / the Python service", ">= 5.00x", ratio(own, func(c *ConcResult) float64 { return c.RatioPeer }),
		own != nil && own.RatioPeer >= 5, own != nil && own.RatioPeer > 0, "%.2fx")
	if own != nil && own.RatioPeer > 0 {
		note("remstore %.0f turns/s, the Python service %.0f", own.TurnsPerSec, own.PeerTurnsPerSec)
		if own.ServerCPUPerTurnMS > 0 && own.PeerServerCPUPerTurnMS > 0 {
			out[len(out)-1].Note += fmt.Sprintf("; PostgreSQL's CPU a turn %.3f ms and %.3f ms", own.ServerCPUPerTurnMS, own.PeerServerCPUPerTurnMS)
		}
	}
	add("32 writers, own sessions: p99 / p50", "< 3.00x", ratio(own, func(c *ConcResult) float64 { return c.P99MS / c.P50MS }),
		own != nil && own.P99MS < 3*own.P50MS, own != nil && own.P50MS > 0, "%.2fx")
	return out
}

// ratio is f(r), or 0 for none.
func ratio[T any](r *T, f func(*T) float64) float64 {
	if r == nil {
		return 0
	}
	return f(r)
}

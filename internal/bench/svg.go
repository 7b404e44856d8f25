package bench

import (
	"fmt"
	"math"
	"strings"
)

// LookupSVG draws median lookup latency (remstore and floor) against table
// size, log-scaled on x.
func LookupSVG(results []Result) string {
	var pts []Result
	for _, r := range results {
		if strings.HasPrefix(r.Name, "lookup in ") {
			pts = append(pts, r)
		}
	}
	const w, h, pad = 640.0, 360.0, 60.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="24" text-anchor="middle" font-size="15">REM LOOKUP latency against table size</text>`+"\n", w/2)
	if len(pts) == 0 {
		return b.String() + "</svg>\n"
	}
	maxY := 0.0
	for _, p := range pts {
		maxY = math.Max(maxY, math.Max(p.MedianMS, p.FloorMS))
	}
	maxY *= 1.2
	lo, hi := math.Log10(float64(pts[0].Size)), math.Log10(float64(pts[len(pts)-1].Size))
	if hi == lo {
		hi = lo + 1
	}
	x := func(size int) float64 { return pad + (math.Log10(float64(size))-lo)/(hi-lo)*(w-2*pad) }
	y := func(ms float64) float64 { return h - pad - ms/maxY*(h-2*pad) }
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`, pad, h-pad, w-pad, h-pad)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", pad, pad, pad, h-pad)
	for i := 0; i <= 4; i++ {
		v := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.3f ms</text>`, pad-6, y(v)+4, v)
	}
	for _, p := range pts {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d rows</text>`, x(p.Size), h-pad+18, p.Size)
	}
	series := func(get func(Result) float64, color, label string, row int) {
		var poly []string
		for _, p := range pts {
			if v := get(p); v > 0 {
				poly = append(poly, fmt.Sprintf("%.1f,%.1f", x(p.Size), y(v)))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`, x(p.Size), y(v), color)
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(poly, " "))
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" fill="%s">%s</text>`+"\n", w-pad-120, 50+row*16, color, label)
	}
	series(func(r Result) float64 { return r.MedianMS }, "#1f77b4", "remstore (median)", 0)
	series(func(r Result) float64 { return r.FloorMS }, "#ff7f0e", "native pgx floor (median)", 1)
	return b.String() + "</svg>\n"
}

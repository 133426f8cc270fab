package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/eval/sweep"
	"github.com/vault-rag/vault-rag/internal/measure"
)

var (
	frontierColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	otherColor    = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	gainColor     = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	lossColor     = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// TradeoffPoint is one configuration on the quality-latency chart.
type TradeoffPoint struct {
	Label string
	P50   time.Duration
	Score float64
}

// Frontier marks the Pareto-optimal points: no other point is at least as
// fast and at least as good, and strictly better in one. Equal points are
// both on it.
func Frontier(pts []TradeoffPoint) []bool {
	on := make([]bool, len(pts))
	for i, a := range pts {
		on[i] = true
		for j, b := range pts {
			if i != j && b.P50 <= a.P50 && b.Score >= a.Score && (b.P50 < a.P50 || b.Score > a.Score) {
				on[i] = false
				break
			}
		}
	}
	return on
}

// tradeoffChart plots a score against p50 latency, a labelled point per
// configuration, the Pareto frontier joined and in colour.
func tradeoffChart(path, title, scoreName string, pts []TradeoffPoint) error {
	if len(pts) == 0 {
		return nil
	}
	on := Frontier(pts)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "p50 latency per query (ms)"
	p.Y.Label.Text = scoreName
	lo, hi := math.Inf(1), 0.0
	minScore := 1.0
	var front, rest, all plotter.XYs
	for i, pt := range pts {
		x := math.Max(measure.Millis(pt.P50), 0.01)
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		minScore = math.Min(minScore, pt.Score)
		xy := plotter.XY{X: x, Y: pt.Score}
		if on[i] {
			front = append(front, xy)
		} else {
			rest = append(rest, xy)
		}
		all = append(all, xy)
	}
	// A score axis ends at 1; it starts at the tenth below the lowest point.
	p.Y.Min, p.Y.Max = math.Max(0, math.Floor(minScore*10-0.5)/10), 1
	p.Y.Tick.Marker = scoreTicks{}
	if hi/lo > 20 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = lo/1.5, hi*3
	} else {
		pad := math.Max((hi-lo)*0.1, 0.5)
		p.X.Min, p.X.Max = math.Max(0, lo-pad), hi+(hi-lo)*0.6+pad*2 // room for labels
	}
	// On the plot only the frontier is named (its points spread along both
	// axes); the key beside the plot lists every configuration.
	var fpts []TradeoffPoint
	var fxys plotter.XYs
	for i := range pts {
		if on[i] {
			fpts, fxys = append(fpts, pts[i]), append(fxys, all[i])
		}
	}
	labels := clusterLabels(fpts, fxys, hi/lo > 20, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pts[order[a]].Score > pts[order[b]].Score })
	key := []string{"", "nDCG@10 · p50 ms · name"}
	if scoreName != "nDCG@10" {
		key[1] = "score · p50 ms · name"
	}
	for _, i := range order {
		mark := "  "
		if on[i] {
			mark = "* "
		}
		key = append(key, fmt.Sprintf("%s%.4f  %6.1f  %s", mark, pts[i].Score, measure.Millis(pts[i].P50), pts[i].Label))
	}
	key = append(key, "", "* on the frontier")
	sort.Slice(front, func(i, j int) bool { return front[i].X < front[j].X })
	if len(front) > 1 {
		// The frontier as a staircase: a configuration buys its score at
		// its latency and keeps it to the next one's.
		var stairs plotter.XYs
		for i, xy := range front {
			if i > 0 {
				stairs = append(stairs, plotter.XY{X: xy.X, Y: front[i-1].Y})
			}
			stairs = append(stairs, xy)
		}
		l, err := plotter.NewLine(stairs)
		if err != nil {
			return err
		}
		l.Color = frontierColor
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
	}
	legend := plot.NewLegend()
	var names []string
	for _, set := range []struct {
		xys   plotter.XYs
		c     color.Color
		name  string
		shape draw.GlyphDrawer
	}{{rest, otherColor, "dominated", draw.CircleGlyph{}}, {front, frontierColor, "Pareto frontier", draw.CircleGlyph{}}} {
		if len(set.xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(set.xys)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = set.c, set.shape, vg.Points(4)
		p.Add(s)
		legend.Add(set.name, s)
		names = append(names, set.name)
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(8)
		lb.TextStyle[i].YAlign = -0.5
		lb.TextStyle[i].XAlign = 0
	}
	lb.Offset = vg.Point{X: vg.Points(5), Y: 0}
	p.Add(lb)
	p.Add(plotter.NewGrid())
	return saveWithLegend(p, legend, names, key, 18*vg.Centimeter, 11*vg.Centimeter, path)
}

// scoreTicks labels a score axis every 0.1, up to and including 1.
type scoreTicks struct{}

// Ticks implements plot.Ticker.
func (scoreTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for i := int(math.Ceil(lo*10 - 1e-9)); float64(i) <= hi*10+1e-9; i++ {
		out = append(out, plot.Tick{Value: float64(i) / 10, Label: fmt.Sprintf("%.1f", float64(i)/10)})
	}
	return out
}

// clusterLabels gives points that would print over each other one label
// naming them all (best first), beside the rightmost of them.
func clusterLabels(pts []TradeoffPoint, xys plotter.XYs, logX bool, x0, x1, y0, y1 float64) plotter.XYLabels {
	norm := func(xy plotter.XY) (float64, float64) {
		x := (xy.X - x0) / (x1 - x0)
		if logX {
			x = (math.Log(xy.X) - math.Log(x0)) / (math.Log(x1) - math.Log(x0))
		}
		return x, (xy.Y - y0) / (y1 - y0)
	}
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pts[order[a]].Score > pts[order[b]].Score })
	var anchors []int
	members := map[int][]int{}
	for _, i := range order {
		xi, yi := norm(xys[i])
		joined := false
		for _, a := range anchors {
			xa, ya := norm(xys[a])
			// A label is about a fifth of the width and a line high.
			if math.Abs(xi-xa) < 0.2 && math.Abs(yi-ya) < 0.03 {
				members[a] = append(members[a], i)
				joined = true
				break
			}
		}
		if !joined {
			anchors = append(anchors, i)
			members[i] = []int{i}
		}
	}
	var out plotter.XYLabels
	for _, a := range anchors {
		var lines []string
		for _, m := range members[a] {
			lines = append(lines, pts[m].Label)
		}
		at := xys[a]
		for _, m := range members[a] {
			at.X = math.Max(at.X, xys[m].X) // clear of every member's dot
		}
		out.XYs = append(out.XYs, at)
		out.Labels = append(out.Labels, strings.Join(lines, ", "))
	}
	return out
}

// saveWithLegend draws the plot with its legend in a strip to the right, so
// the legend never covers data and a score axis can end at 1.
func saveWithLegend(p *plot.Plot, l plot.Legend, names, key []string, w, h vg.Length, path string) error {
	strip := vg.Length(0)
	if len(names) > 0 {
		for _, n := range names {
			strip = max(strip, l.TextStyle.Width(n))
		}
		strip += l.ThumbnailWidth + 3*l.Padding + vg.Points(12)
	}
	keyStyle := l.TextStyle
	keyStyle.Font.Size = vg.Points(8)
	keyStyle.Font.Variant = "Mono"
	keyStyle.XAlign, keyStyle.YAlign = 0, -1
	lineH := keyStyle.FontExtents().Height
	for _, k := range key {
		strip = max(strip, keyStyle.Width(k)+vg.Points(12))
	}
	// The key may need more height than the plot.
	h = max(h, vg.Points(40)+lineH*vg.Length(len(key)+len(names)+1))
	img := vgimg.New(w+strip, h)
	dc := draw.New(img)
	p.Draw(draw.Crop(dc, 0, -strip, 0, 0))
	if strip > 0 {
		l.Top = true
		l.Left = true
		l.Draw(draw.Crop(dc, w+vg.Points(6), 0, 0, -vg.Points(24)))
	}
	y := h - vg.Points(30) - lineH*vg.Length(len(names))
	for _, k := range key {
		dc.FillText(keyStyle, vg.Point{X: w + vg.Points(6), Y: y}, k)
		y -= lineH
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DeltaChartMax is how many gains and how many losses a Δ chart shows at
// most (the largest of each); the title says when some were left out.
const DeltaChartMax = 30

// deltaChart draws per-query Δ nDCG@10 of other against base as sorted
// horizontal bars, each carrying its value; queries that did not move are
// counted in the title, not drawn.
func deltaChart(path, dataset string, base, other *eval.ConfigRun) error {
	byID := map[string]float64{}
	for _, q := range base.Queries {
		byID[q.ID] = q.Score.NDCG
	}
	type d struct {
		id string
		v  float64
	}
	var gains, losses []d
	same := 0
	for _, q := range other.Queries {
		b, ok := byID[q.ID]
		if !ok {
			continue
		}
		switch v := q.Score.NDCG - b; {
		case math.Abs(v) < 5e-5: // shows as +0.0000
			same++
		case v > 0:
			gains = append(gains, d{q.ID, v})
		default:
			losses = append(losses, d{q.ID, v})
		}
	}
	sort.SliceStable(gains, func(i, j int) bool { return gains[i].v > gains[j].v })
	sort.SliceStable(losses, func(i, j int) bool { return losses[i].v < losses[j].v })
	ng, nl := len(gains), len(losses)
	gains, losses = gains[:min(ng, DeltaChartMax)], losses[:min(nl, DeltaChartMax)]
	// Top to bottom: largest gain … smallest gain, smallest loss … largest
	// loss. Bars are drawn bottom-up, so the list is built reversed.
	var rows []d
	for i := len(losses) - 1; i >= 0; i-- {
		rows = append(rows, losses[i])
	}
	for i := len(gains) - 1; i >= 0; i-- {
		rows = append(rows, gains[i])
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: Δ nDCG@10 per query, %s − %s\n%d better, %d worse, %d unchanged", dataset, other.Name, base.Name, ng, nl, same)
	if ng > len(gains) || nl > len(losses) {
		p.Title.Text += fmt.Sprintf(" (the %d largest of each shown)", DeltaChartMax)
	}
	p.X.Label.Text = "Δ nDCG@10"
	if len(rows) == 0 {
		p.Title.Text = fmt.Sprintf("%s: %s ranks every query as %s does (Δ nDCG@10 = 0 for %d)", dataset, other.Name, base.Name, same)
		p.HideY()
		p.X.Min, p.X.Max = -1, 1
		return p.Save(16*vg.Centimeter, 5*vg.Centimeter, path)
	}
	m := 0.0
	names := make([]string, len(rows))
	for i, r := range rows {
		m = math.Max(m, math.Abs(r.v))
		names[i] = r.id
	}
	// A difference of scores lies in [-1, 1]; the axis is symmetric, so a
	// gain and a loss of the same size look the same, with room for labels.
	m = math.Min(1, math.Ceil(m*10)/10)
	p.X.Min, p.X.Max = -m*1.35, m*1.35
	w := vg.Points(9)
	for _, set := range []struct {
		pos bool
		c   color.Color
	}{{true, gainColor}, {false, lossColor}} {
		vals := make(plotter.Values, len(rows))
		for i, r := range rows {
			if (r.v > 0) == set.pos {
				vals[i] = r.v
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Horizontal = true
		bars.Color = set.c
		bars.LineStyle.Width = 0
		p.Add(bars)
	}
	var labels plotter.XYLabels
	for i, r := range rows {
		labels.XYs = append(labels.XYs, plotter.XY{X: r.v, Y: float64(i)})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%+.3f", r.v))
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i, r := range rows {
		lb.TextStyle[i].Font.Size = vg.Points(7)
		lb.TextStyle[i].YAlign = -0.5
		if r.v > 0 {
			lb.TextStyle[i].XAlign = 0
		} else {
			lb.TextStyle[i].XAlign = -1
		}
	}
	lb.Offset = vg.Point{X: 0, Y: 0}
	p.Add(lb)
	p.NominalY(names...)
	p.Add(plotter.NewGrid())
	return p.Save(16*vg.Centimeter, vg.Length(70)+vg.Points(11)*vg.Length(len(rows)), path)
}

// chartName makes a configuration name safe in a file name.
func chartName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// writeDatasetCharts writes the quality-latency chart and one Δ chart per
// configuration against the reference; it returns the files' names.
func writeDatasetCharts(dir string, r *eval.DatasetRun, reference string) ([]string, error) {
	var out []string
	var pts []TradeoffPoint
	var ref *eval.ConfigRun
	for _, c := range r.Configs {
		if c.Skipped != "" {
			continue
		}
		pts = append(pts, TradeoffPoint{Label: c.Name, P50: measure.Percentile(c.Latency, 50), Score: c.Mean.NDCG})
		if c.Name == reference {
			ref = c
		}
	}
	name := r.Dataset.Name + "-tradeoff.png"
	if err := tradeoffChart(filepath.Join(dir, name), r.Dataset.Name+": nDCG@10 against p50 latency", "nDCG@10", pts); err != nil {
		return nil, err
	}
	if len(pts) > 0 {
		out = append(out, name)
	}
	if ref == nil {
		return out, nil
	}
	for _, c := range r.Configs {
		if c.Skipped != "" || c == ref {
			continue
		}
		name := fmt.Sprintf("%s-delta-%s.png", r.Dataset.Name, chartName(c.Name))
		if err := deltaChart(filepath.Join(dir, name), r.Dataset.Name, ref, c); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, nil
}

// transferChart draws, per dataset, the base's nDCG@10 beside the chosen
// setting's in-sample figure, its k-fold estimate and its
// leave-one-dataset-out estimate: a family that only wins where it was tuned
// shows its in-sample bar above the base and its leave-one-out bar below.
func transferChart(path string, r *sweep.Result) error {
	_, bper := r.BaseMean()
	names := make([]string, len(r.Runs))
	series := []barSeries{{name: "base " + r.Sweep.Base.Name}, {name: "chosen, in-sample"}, {name: fmt.Sprintf("%d-fold CV", r.Sweep.Folds)}, {name: "leave-one-dataset-out"}}
	for d, run := range r.Runs {
		names[d] = run.Dataset.Name
		if !r.Selection.Decides[d] {
			names[d] += " (guard)"
		}
		series[0].vals = append(series[0].vals, bper[d])
		series[1].vals = append(series[1].vals, r.DatasetMean(d, r.Winner))
		series[2].vals = append(series[2].vals, r.CV.Estimate[d])
		series[3].vals = append(series[3].vals, r.LODO.Estimate[d])
	}
	return groupedBars(path, "sweep "+r.Sweep.Name+": does the choice transfer?", "nDCG@10", names, series, 1, "%.3f")
}

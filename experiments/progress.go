package experiments

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress reports done/total runs, the rate and the ETA on stderr: a bar
// redrawn in place on a terminal (at most ten times a second), otherwise
// one line per 10%. It reads the wall clock, which is fine here: nothing
// it measures reaches a result file.
type progress struct {
	w          io.Writer
	tty        bool
	now        func() time.Time
	total      int
	done       int
	start      time.Time
	lastDraw   time.Time
	lastDecile int
}

func newProgress(o Options, total int) *progress {
	p := &progress{w: o.Progress, tty: o.ProgressTTY, now: o.Now, total: total}
	if p.now == nil {
		p.now = time.Now
	}
	if p.w != nil && total > 0 {
		p.start = p.now()
	}
	return p
}

func (p *progress) step() {
	if p.w == nil || p.total == 0 {
		return
	}
	p.done++
	now := p.now()
	if p.tty {
		if now.Sub(p.lastDraw) >= 100*time.Millisecond || p.done == p.total {
			p.lastDraw = now
			fmt.Fprintf(p.w, "\r%s", p.line(now, true))
		}
		return
	}
	if d := p.done * 10 / p.total; d > p.lastDecile {
		p.lastDecile = d
		fmt.Fprintln(p.w, p.line(now, false))
	}
}

func (p *progress) finish() {
	if p.w != nil && p.tty && p.total > 0 {
		fmt.Fprintf(p.w, "\r%s\n", p.line(p.now(), true))
	}
}

func (p *progress) line(now time.Time, bar bool) string {
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done) / el
	}
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.done)/rate*float64(time.Second)) / time.Second * time.Second).String()
	}
	s := fmt.Sprintf("%d/%d runs (%3d%%)  %.1f runs/s  ETA %s", p.done, p.total, p.done*100/p.total, rate, eta)
	if !bar {
		return "sweep: " + s
	}
	const width = 30
	n := p.done * width / p.total
	return "[" + strings.Repeat("#", n) + strings.Repeat(" ", width-n) + "] " + s + "  "
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// consoleArtifacts is where the browser tests keep their screenshots
// (gitignored): CONSOLE_ARTIFACTS, else testdata/console-artifacts.
func consoleArtifacts(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("CONSOLE_ARTIFACTS")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("testdata", "console-artifacts"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// pageProbe runs in every page before its scripts: it records Content
// Security Policy violations, and defines nothing the hostile strings use
// (window.__xss stays undefined unless injected code runs).
const pageProbe = `window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`

// browserTab is a headless Chromium tab.
type browserTab struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// mustBrowser starts a headless Chromium (Debian's chromium package) for
// the test and returns a tab; it skips without Chromium (fails with CI=true).
func mustBrowser(tb testing.TB) *browserTab {
	tb.Helper()
	path := requireCommand(tb, "chromium", "apt-get install chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	tab := &browserTab{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			tab.mu.Lock()
			tab.errors = append(tab.errors, ev.ExceptionDetails.Error())
			tab.mu.Unlock()
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				tab.mu.Lock()
				tab.errors = append(tab.errors, "console.error: "+strings.Join(parts, " "))
				tab.mu.Unlock()
			}
		}
	})
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(pageProbe).Do(ctx)
		return err
	})); err != nil {
		cancelCtx()
		cancelAlloc()
		tb.Fatalf("chromium does not start: %v", err)
	}
	tb.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	return tab
}

// run runs actions with a deadline.
func (b *browserTab) run(tb testing.TB, actions ...chromedp.Action) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second) // a deadline against hangs, not a timing check: a loaded CI machine is slow
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		tb.Fatalf("browser: %v\npage errors: %v", err, b.pageErrors())
	}
}

func (b *browserTab) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// eval evaluates a JavaScript expression in the page into out.
func (b *browserTab) eval(tb testing.TB, expr string, out any) {
	tb.Helper()
	b.run(tb, chromedp.Evaluate(expr, out))
}

// waitJS waits until a JavaScript expression is true.
func (b *browserTab) waitJS(tb testing.TB, expr string) {
	tb.Helper()
	b.run(tb, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second)))
}

// open loads a console page (hash is "#/...") and waits until it rendered.
func (b *browserTab) open(tb testing.TB, base, hash string) {
	tb.Helper()
	b.run(tb, chromedp.Navigate(base+"/ui/"+hash))
	b.waitReady(tb)
}

// waitReady waits for the page's render to finish.
func (b *browserTab) waitReady(tb testing.TB) {
	tb.Helper()
	b.waitJS(tb, `document.getElementById('view') && document.getElementById('view').dataset.ready === 'true' && document.getElementById('view').dataset.rendered === location.hash`)
}

// text is the visible text of the first element matching sel.
func (b *browserTab) text(tb testing.TB, sel string) string {
	tb.Helper()
	var s string
	b.eval(tb, fmt.Sprintf(`(document.querySelector(%q) || {innerText: ''}).innerText`, sel), &s)
	return s
}

// value is the value of the first input matching sel.
func (b *browserTab) value(tb testing.TB, sel string) string {
	tb.Helper()
	var s string
	b.eval(tb, fmt.Sprintf(`(document.querySelector(%q) || {value: ''}).value`, sel), &s)
	return s
}

// count is the number of elements matching sel.
func (b *browserTab) count(tb testing.TB, sel string) int {
	tb.Helper()
	var n int
	b.eval(tb, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)
	return n
}

// mustClean fails when injected code ran, an element was injected, the
// page broke its Content-Security-Policy or threw.
func (b *browserTab) mustClean(tb testing.TB, where string) {
	tb.Helper()
	var st struct {
		XSS       bool     `json:"xss"`
		Injected  int      `json:"injected"`
		JSLinks   int      `json:"jsLinks"`
		Violation []string `json:"csp"`
	}
	b.eval(tb, `({xss: window.__xss !== undefined,
		injected: document.querySelectorAll('#view img, #view script, #view svg, #view iframe, #view object, #view embed, #view [onerror], #view [onload], #view [onclick]').length,
		jsLinks: [...document.querySelectorAll('a[href]')].filter((a) => !a.getAttribute('href').startsWith('#/') && !a.getAttribute('href').startsWith('blob:')).length,
		csp: window.__csp || []})`, &st)
	if st.XSS || st.Injected > 0 || st.JSLinks > 0 || len(st.Violation) > 0 {
		tb.Fatalf("%s: injected code ran %v, %d injected elements, %d links leaving the console, CSP violations %v", where, st.XSS, st.Injected, st.JSLinks, st.Violation)
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		tb.Fatalf("%s: the page threw: %v", where, errs)
	}
}

// screenshot saves a full-page PNG named name among the artifacts.
func (b *browserTab) screenshot(tb testing.TB, name string) []byte {
	tb.Helper()
	var buf []byte
	b.run(tb, chromedp.FullScreenshot(&buf, 100))
	path := filepath.Join(consoleArtifacts(tb), name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("screenshot: %s", path)
	return buf
}

// inkedPixels counts the pixels of a PNG that are not (near) white.
func inkedPixels(tb testing.TB, png8 []byte) int {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(png8))
	if err != nil {
		tb.Fatal(err)
	}
	return countInk(img)
}

func countInk(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				n++
			}
		}
	}
	return n
}

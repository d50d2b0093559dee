package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// headless starts a headless Chromium (exe) for the test, with a browser window width
// pixels wide, and returns its context, cancelled when the test ends or after timeout.
func headless(t *testing.T, exe string, width int, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(width, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

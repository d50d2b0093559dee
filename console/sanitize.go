package console

import (
	"html/template"
	"net/url"
	"sync"

	"github.com/microcosm-cc/bluemonday"
)

// blockedImage is the placeholder every image of a message's HTML points to: remote
// content is never loaded (it would tell the sender that, when and where the mail was
// read), and inline images are not served in this slice.
const blockedImage = "/static/blocked-image.svg"

// messagePolicy is bluemonday's UGCPolicy (no script, no event handlers, no style, no
// forms, safe URL schemes only) with every src rewritten to blockedImage and links
// opened apart, without a referrer.
var messagePolicy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.RequireParseableURLs(true)
	p.RewriteSrc(func(u *url.URL) { *u = url.URL{Path: blockedImage} })
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})

// sanitizeHTML is a message's HTML part made safe to show inside a console page.
func sanitizeHTML(raw string) template.HTML {
	return template.HTML(messagePolicy().Sanitize(raw)) // #nosec G203 -- sanitised by bluemonday just above
}

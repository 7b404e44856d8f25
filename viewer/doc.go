// Package viewer is the read-only web page of `remstore serve --ui`: a tenant's
// sessions, each as the agent sees it (cuts, keys, tool pairs, pydantic-ai
// messages) and the DEBUG_AUDIT_SESSION dumps of its agent calls, diffed.
//
// It signs a browser in once with an API key (the same keys and user rule as
// the API), then works from an HttpOnly, SameSite=Strict cookie; every POST
// carries a CSRF token, and pages are served under a Content-Security-Policy
// with no inline script. Templates and assets are embedded: no build step, no
// network. Hostile strings in content, names and arguments render as text,
// with bidirectional controls shown as visible code points.
package viewer

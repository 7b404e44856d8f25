// Package version says which remstore this is: the release a build came from
// (set by the release build, or the module version of `go install ...@vX`),
// or the release being prepared plus the commit for a build from a checkout.
package version

package client

// The retry policy's parts, for the policy test that reads the table the
// Python client's tests read too.
type (
	Safety   = retrySafety
	Decision = retryDecision
	Outcome  = tryOutcome
	Try      = tryState
)

var (
	Decide = decide
	Delay  = delay
)

const (
	Resend  = resend
	Unsent  = unsent
	Durable = durable
)

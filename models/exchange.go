package models

import "encoding/json"

// Exchange is one model call as the model saw it, written beside the Python service's
// keys (amended: "what the model received is recorded whole"). Every field
// is optional: a load records what it sent (CallID, so that the caller can
// complete it), the caller what only it knows. JSON values are kept as
// given, as YAML.
type Exchange struct {
	// CallID names the invocation, for Complete.
	CallID string `json:"call_id,omitempty"`
	// Model is the model's name, as its SDK says it.
	Model string `json:"model,omitempty"`
	// ModelSettings are the settings of the call (temperature, max tokens...).
	ModelSettings json.RawMessage `json:"model_settings,omitempty"`
	// Tools are the tools the model was offered, as its SDK describes them.
	Tools json.RawMessage `json:"tools,omitempty"`
	// Request is what the model received: its messages (pydantic-ai's, the
	// Agents SDK's input) or the model API's whole request body.
	Request json.RawMessage `json:"request,omitempty"`
	// Answer is what it answered: the new messages, or the API's response.
	Answer json.RawMessage `json:"answer,omitempty"`
	// LatencyMS is how long the call took, from request to answer.
	LatencyMS *float64 `json:"latency_ms,omitempty"`
	// Usage is the call's own token usage, as its SDK counts it.
	Usage json.RawMessage `json:"usage,omitempty"`
}

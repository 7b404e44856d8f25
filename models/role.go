package models

// Role is the author of a history message. Unknown roles are kept verbatim so
// that they round-trip unchanged through store and load.
type Role string

// The roles of SPEC §1. RoleFunction and RoleModel are accepted spellings that
// [Role.Normalize] maps to RoleTool and RoleAssistant.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
	RoleFunction  Role = "function"
	RoleModel     Role = "model"
)

// Normalize maps the alternative spellings to their canonical role: function
// becomes tool, model becomes assistant, and the empty role (what the peer
// writes when it has none) becomes assistant. Other roles are returned as is.
func (r Role) Normalize() Role {
	switch r {
	case RoleFunction:
		return RoleTool
	case RoleModel, "":
		return RoleAssistant
	}
	return r
}

// IsTool reports whether r is a tool result (tool or function).
func (r Role) IsTool() bool { return r.Normalize() == RoleTool }

// IsAssistant reports whether r is a model answer (assistant, model or empty).
func (r Role) IsAssistant() bool { return r.Normalize() == RoleAssistant }

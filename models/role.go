package models

import (
	"fmt"
	"slices"
	"strings"
)

// Role is the author of a history message. Unknown roles are kept verbatim so
// that they round-trip unchanged through store and load.
type Role string

// The roles of the contract with the Python service. RoleFunction and RoleModel are accepted spellings that
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
// becomes tool, model becomes assistant, and the empty role (what the Python service
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

// Roles are the roles remstore's write paths accept.
var roles = []Role{RoleUser, RoleAssistant, RoleTool, RoleSystem, RoleFunction, RoleModel}

// Roles are the roles remstore's write paths accept (a copy).
func Roles() []Role { return slices.Clone(roles) }

// Known reports whether r is one of Roles. Rows with other roles (the Python service
// writes any) still load unchanged; only remstore's writers refuse them.
func (r Role) Known() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem, RoleFunction, RoleModel:
		return true
	}
	return false
}

// CheckRole is the write paths' one check of a role: nil for a known role,
// else a *FieldError (message i, field "role") that names the value, lists
// the roles and suggests the near one.
func CheckRole(i int, r Role) error {
	if r.Known() {
		return nil
	}
	names := make([]string, len(roles))
	for j, k := range roles {
		names[j] = string(k)
	}
	return &FieldError{Index: i, Field: "role", Reason: fmt.Sprintf("%s is not a role; the roles are %s%s",
		quoteShort(string(r)), strings.Join(names, ", "), DidYouMean(string(r), names))}
}

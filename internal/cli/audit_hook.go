package cli

import "github.com/remstore/remstore/models"

// audit records what an agent call saw; the audit package fills this in.
func (e *env) audit(sessionID, agentName, prompt string, raw []models.HistoryMessage, produced int) {}

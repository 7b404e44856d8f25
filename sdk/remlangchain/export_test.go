package remlangchain

import "github.com/remstore/remstore/sdk"

// StoreOf is the History's store, for tests.
func StoreOf(h *History) sdk.Store { return h.st }

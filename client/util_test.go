package client_test

import (
	"errors"

	"github.com/remstore/remstore/client"
)

func asError(err error, e **client.Error) bool { return errors.As(err, e) }

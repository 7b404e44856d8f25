package client

import (
	"os"

	"github.com/remstore/remstore/settings"
)

// FromEnv is New configured the way the Python client and `remstore health`
// are: the URL from REMSTORE_URL (default http://127.0.0.1:8088, serve's
// default address), and REMSTORE_API_KEY and REMSTORE_USER_ID where o leaves
// APIKey and UserID empty. One variable moves every client to another port.
func FromEnv(o Options) (*Client, error) {
	url := os.Getenv(settings.KeyURL)
	if url == "" {
		url = settings.LocalURL(settings.DefaultAddr)
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv(settings.KeyAPIKey)
	}
	if o.UserID == "" {
		o.UserID = os.Getenv(settings.KeyUserID)
	}
	return New(url, o)
}

// BaseURL is the server the client talks to.
func (c *Client) BaseURL() string { return c.base.String() }

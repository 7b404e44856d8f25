// Package httpapi is remstore over HTTP: the JSON API that `remstore serve`
// runs for backends in any language ([New]), and a net/http middleware for Go
// backends that loads the history before a handler and stores the turn after ([Middleware]).
//
//	srv, _ := httpapi.New(httpapi.Options{Stores: stores, APIKeys: keys}) // stores: sessionstore.FromSettings
//	http.ListenAndServe("127.0.0.1:8088", srv)
//
// Every route is in the embedded OpenAPI document (openapi.json).
package httpapi

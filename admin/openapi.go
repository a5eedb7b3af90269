package admin

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 description, served at
// /admin/v1/openapi.json; a test holds it and the routes to each other.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(OpenAPI)
}

// Package all imports every connector type so that it registers itself.
// Each type has one file here holding only its blank import, behind a build
// constraint in the manner of Telegraf's plugins/inputs/all:
//
//	//go:build !custom || connector_<type>
//
// A default build has every type. A build with the tag custom has only the
// types it names, each with its own tag, and neither compiles nor
// initialises the others or their client libraries:
//
//	go build -tags custom,connector_http,connector_webhook ./cmd/legate
//
// (make build-slim CONNECTORS="http webhook" does the same.) Upstream MCP
// servers are part of the core and are always in. Adding a connector type
// adds its file here, with its own tag; see docs/build.md.
package all

// Package sources defines where the gateway's tools come from, before
// anything is built: connector instances (InstanceDefs) and upstream MCP
// servers (UpstreamDefs), each merged from the config file and the store,
// with where each was defined for error messages; and the credentials of
// an instance, resolved from the vault or the environment at call time.
package sources

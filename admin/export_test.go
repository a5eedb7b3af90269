package admin

// RoutePatterns lists the API's routes as ServeMux patterns, for tests
// that walk them.
func RoutePatterns() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = rt.pattern
	}
	return append(out, connectionRoutes...)
}

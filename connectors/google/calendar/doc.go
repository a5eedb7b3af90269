// Package calendar holds the google connector's calendar toolset: list
// calendars and events, query free/busy; create, update and delete events
// and answer invitations, through google.golang.org/api's calendar/v3.
//
// The connector hands the tools what they need in [Deps]: its saas.Kit,
// an HTTP client sending the access token the kit hands each attempt, the
// API's base URL and its mapping of Google's errors.
//
// Writes run through saas.WriteOnce. A created event takes an id derived
// from the call's operation id (Calendar accepts a client's id, base32hex,
// and refuses a second event with it: 409), so a retry whose first
// attempt's answer was lost gets 409 and reads the event instead of
// creating another. An update, a deletion or an answer to an invitation
// sets a state: an attempt whose answer was lost is read back before it
// is sent again. Nothing else of Legate's is left in the calendar.
package calendar

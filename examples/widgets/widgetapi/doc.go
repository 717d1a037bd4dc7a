// Package widgetapi defines the example's resources, widgets and widget
// classes, and registers them with a kapi server. It is what a user's own
// API package looks like: the fields declare their constraints and
// defaults in struct tags (package validation), and a Validate function
// checks what tags cannot say (unique port names).
package widgetapi

// Package widgetapi defines the example's resources, widgets and widget
// classes, and registers them with a kapi server. It is what a user's own
// API package looks like.
package widgetapi

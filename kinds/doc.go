// Package kinds serves kinds defined at run time: resources whose objects
// have no Go type, described by a Definition (what a
// CustomResourceDefinition's spec says) and shaped by package schema.
//
// The serving part is being built; for now the package holds the
// Definition that package crd and services fill in.
package kinds

// Package schema is kapi's schema engine for kinds defined at run time: it
// reads the OpenAPI v3 schema of a CustomResourceDefinition version (an
// apiextensions.k8s.io/v1 JSONSchemaProps) and does to objects what
// kube-apiserver does to custom resources with it.
package schema

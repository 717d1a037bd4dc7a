package codec

// Internals for the package's external tests.
var (
	PlainJSON        = plainJSON
	YAMLToJSONAsYAML = yamlToJSON
)

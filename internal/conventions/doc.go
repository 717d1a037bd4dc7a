// Package conventions tells the author of an API type which of the
// Kubernetes API conventions the type breaks, when it is registered: advice
// that costs nothing at run time and saves a breaking change later.
//
// # What it reports
//
// Each [Finding] names the field by its JSON path and the convention:
//
//   - a floating-point field under spec (the conventions: "never use them
//     in spec", for they do not round-trip between languages and
//     encodings);
//   - an unsigned integer (uint, uint16, …: other languages and JSON
//     parsers have none; use int32 or int64 with a minimum);
//   - Go's int (its size depends on the platform: use int32 or int64);
//   - a map whose values are objects (a list of named objects, listType
//     map keyed by name, is what clients merge, patch and show);
//   - an enum value that is not CamelCase ("Red", "TCP", not "red" or
//     "tcp_v2").
//
// Kubernetes' own types (packages kapi and kapi/builtin) are not checked:
// they are as Kubernetes made them.
//
// # Use
//
// apiserver.Register calls [Advise] on every type it registers: each
// finding is logged as a warning once, at registration, through the
// server's logger, or the registration is refused (ErrBroken) under
// apiserver.WithStrictConventions. [Check] is the list alone.
package conventions

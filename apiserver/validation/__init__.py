"""Pure validation functions: an object (or part of one) in, every `FieldError` found out."""

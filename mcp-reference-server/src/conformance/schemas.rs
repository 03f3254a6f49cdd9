//! The input and elicitation schemas of the fixtures, as the suite's
//! scenarios describe them: the schema is what those scenarios check.

use serde_json::{Value, json};

/// SEP-1034: a default for every primitive type.
pub(super) fn defaults_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "score": { "type": "number", "default": 95.5 },
            "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "default": true },
        },
    })
}

/// SEP-1330: the five forms of enum.
pub(super) fn enums_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
            "titledSingle": { "type": "string", "oneOf": [
                { "const": "value1", "title": "First Option" },
                { "const": "value2", "title": "Second Option" },
                { "const": "value3", "title": "Third Option" },
            ] },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": { "type": "array", "items": {
                "type": "string", "enum": ["option1", "option2", "option3"],
            } },
            "titledMulti": { "type": "array", "items": { "anyOf": [
                { "const": "value1", "title": "First Choice" },
                { "const": "value2", "title": "Second Choice" },
                { "const": "value3", "title": "Third Choice" },
            ] } },
        },
    })
}

/// SEP-1613 and SEP-2106: a JSON Schema 2020-12 input schema (`$schema`,
/// `$defs` with an `$anchor`, `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`,
/// `additionalProperties`) that must come through `tools/list` whole.
pub(super) fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": { "street": { "type": "string" }, "city": { "type": "string" } },
        } },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" },
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false,
    })
}

/// SEP-2243: a string argument mirrored in the `Mcp-Param-Region` header.
pub(super) fn header_param_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "region": { "type": "string", "x-mcp-header": "Region" } },
        "required": ["region"],
    })
}

//! The restricted JSON Schema of an elicitation form: a flat object whose
//! properties are strings, numbers, booleans or enums.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

use super::common::{JsonObject, from_object, serialize_tagged};

string_enum! {
    /// The `format` of a string field.
    StringFormat {
        /// An e-mail address.
        Email = "email",
        /// A URI.
        Uri = "uri",
        /// A date.
        Date = "date",
        /// A date and time.
        DateTime = "date-time",
    }
}

string_enum! {
    /// The `type` of a number field.
    NumberKind {
        /// Any number.
        Number = "number",
        /// An integer.
        Integer = "integer",
    }
}

/// A string field (`"type": "string"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The shortest length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// The longest length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// A format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A number field (`"type": "number"` or `"integer"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub kind: NumberKind,
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The least value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// The greatest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Number>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A boolean field (`"type": "boolean"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BooleanSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One titled choice of an enum field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// Its label.
    pub title: String,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice among plain values (`"type": "string"` with `enum`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels for the values (the legacy titled form, deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A single choice among titled values (`"type": "string"` with `oneOf`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<EnumOption>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `items` of a multi-select field: plain values (`enum`) or titled
/// ones (`anyOf`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MultiSelectItems {
    /// `"string"` for plain values.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Plain values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// Titled values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<EnumOption>>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A multiple choice (`"type": "array"`), 2025-11-25+.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MultiSelectEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: MultiSelectItems,
    /// The default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Members this library does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One field of a form.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// A string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// A single choice among plain values (also the legacy `enumNames` form).
    Enum(EnumSchema),
    /// A single choice among titled values.
    TitledEnum(TitledEnumSchema),
    /// A multiple choice.
    MultiSelect(MultiSelectEnumSchema),
    /// A field this library does not know, kept whole.
    Unknown(JsonObject),
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(x) => serialize_tagged(s, "type", "string", x),
            Self::Number(x) => x.serialize(s),
            Self::Boolean(x) => serialize_tagged(s, "type", "boolean", x),
            Self::Enum(x) => serialize_tagged(s, "type", "string", x),
            Self::TitledEnum(x) => serialize_tagged(s, "type", "string", x),
            Self::MultiSelect(x) => serialize_tagged(s, "type", "array", x),
            Self::Unknown(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = JsonObject::deserialize(d)?;
        let kind = map.get("type").and_then(Value::as_str).map(str::to_owned);
        Ok(match kind.as_deref() {
            Some("number" | "integer") => Self::Number(from_object(map)?),
            Some("string") => {
                map.remove("type");
                if map.contains_key("enum") {
                    Self::Enum(from_object(map)?)
                } else if map.contains_key("oneOf") {
                    Self::TitledEnum(from_object(map)?)
                } else {
                    Self::String(from_object(map)?)
                }
            }
            Some("boolean") => {
                map.remove("type");
                Self::Boolean(from_object(map)?)
            }
            Some("array") => {
                map.remove("type");
                Self::MultiSelect(from_object(map)?)
            }
            Some(_) => Self::Unknown(map),
            None => return Err(D::Error::missing_field("type")),
        })
    }
}

impl crate::unknown::UnknownFields for PrimitiveSchemaDefinition {
    fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
        match self {
            Self::String(x) => x.collect_unknown(path, out),
            Self::Number(x) => x.collect_unknown(path, out),
            Self::Boolean(x) => x.collect_unknown(path, out),
            Self::Enum(x) => x.collect_unknown(path, out),
            Self::TitledEnum(x) => x.collect_unknown(path, out),
            Self::MultiSelect(x) => x.collect_unknown(path, out),
            Self::Unknown(_) => out.push(format!("{path} (unknown field type)")),
        }
    }
}

unknown_fields! {
    StringSchema { format: "format" };
    NumberSchema { kind: "type" };
    BooleanSchema;
    EnumOption;
    EnumSchema;
    TitledEnumSchema { one_of: "oneOf" };
    MultiSelectItems { any_of: "anyOf" };
    MultiSelectEnumSchema { items: "items" };
}

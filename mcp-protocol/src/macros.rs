//! Macros shared by the type modules.

/// Defines a string enum whose unknown values are kept in an `Unknown`
/// variant instead of failing to parse.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this library does not know, kept exactly as received.
            Unknown(String),
        }

        impl $name {
            /// The value as it appears on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )+
                    Self::Unknown(s) => s,
                }
            }

            /// Whether this library knows the value.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Unknown(_))
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $( $value => Self::$variant, )+
                    other => Self::Unknown(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $( $value => Self::$variant, )+
                    _ => Self::Unknown(s),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <String as ::serde::Deserialize>::deserialize(d).map(Self::from)
            }
        }

        impl $crate::unknown::UnknownFields for $name {
            fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
                if let Self::Unknown(v) = self {
                    out.push(format!("{path} = {v:?} (unknown value)"));
                }
            }
        }
    };
}

/// Implements [`crate::unknown::UnknownFields`] for a struct with an `extra`
/// catch-all, recursing into the listed fields.
macro_rules! unknown_fields {
    ($($ty:ty $({ $($field:ident : $wire:literal),* $(,)? })?;)+) => {
        $(
            impl $crate::unknown::UnknownFields for $ty {
                fn collect_unknown(&self, path: &str, out: &mut Vec<String>) {
                    $crate::unknown::report_extra(&self.extra, path, out);
                    $($(
                        $crate::unknown::UnknownFields::collect_unknown(
                            &self.$field,
                            &format!("{path}.{}", $wire),
                            out,
                        );
                    )*)?
                }
            }
        )+
    };
}

/// `Deserialize` for a struct of named members plus `extra` (the members
/// this library does not know), the same as serde's derive with
/// `#[serde(flatten)] extra` would give, without `flatten`'s cost: serde
/// buffers a flattened struct's whole object, nested values included,
/// into an intermediate form before typing it, where this types each
/// member as it comes. Kept for the results and items a client reads by
/// the hundred (`tools/list`, `tools/call`).
///
/// `required` members must be present; `optional` ones are `Option`s
/// (absent and `null` both read as `None`). A member named twice is an
/// error, as with the derive.
///
/// With `moved` groups (members that hold JSON as it is: a `Value`, an
/// object, a list of such types), the type also gets `from_value`, which
/// types a result the client already holds as a `Value` by moving those
/// members and the unknown ones into place: through serde they would be
/// rebuilt, node by node, from the `Value` they already are.
macro_rules! deserialize_with_extra {
    (
        $ty:ident, $what:literal,
        required { $($rf:ident : $rw:literal),* $(,)? }
        optional { $($of:ident : $ow:literal),* $(,)? }
        moved required { $($mrf:ident : $mrw:literal),* $(,)? }
        moved optional { $($mof:ident : $mow:literal),* $(,)? }
        example $example:literal
    ) => {
        deserialize_with_extra! {
            $ty, $what,
            required { $($rf: $rw,)* $($mrf: $mrw),* }
            optional { $($of: $ow,)* $($mof: $mow),* }
        }

        impl $ty {
            #[doc = concat!(
                "Types ", $what, " held as a `Value`, as `serde_json::from_value` ",
                "would, with the same errors, but moving the members that are JSON ",
                "as it is (and the unknown ones) into place instead of rebuilding them."
            )]
            ///
            /// ```
            #[doc = concat!("use mcp_protocol::types::", stringify!($ty), ";")]
            #[doc = concat!("let value: serde_json::Value = serde_json::from_str(r#\"", $example, "\"#).unwrap();")]
            #[doc = concat!(
                "let typed = ", stringify!($ty), "::from_value(value.clone()).unwrap();"
            )]
            /// assert_eq!(typed, serde_json::from_value(value).unwrap());
            /// ```
            pub fn from_value(
                value: ::serde_json::Value,
            ) -> ::std::result::Result<Self, ::serde_json::Error> {
                let ::serde_json::Value::Object(members) = value else {
                    // Not an object: serde says so, in its words.
                    return ::serde_json::from_value(value);
                };
                $( let mut $rf = None; )*
                $( let mut $of = None; )*
                $( let mut $mrf = None; )*
                $( let mut $mof = None; )*
                let mut extra = $crate::types::JsonObject::new();
                for (key, value) in members {
                    match key.as_str() {
                        $( $rw => $rf = Some(::serde_json::from_value(value)?), )*
                        $( $ow => $of = ::serde_json::from_value(value)?, )*
                        $( $mrw => $mrf = Some($crate::macros::MovedFrom::moved_from(value)?), )*
                        $( $mow => $mof = $crate::macros::moved_option(value)?, )*
                        _ => {
                            extra.insert(key, value);
                        }
                    }
                }
                Ok($ty {
                    $( $rf: $rf.ok_or_else(|| {
                        <::serde_json::Error as ::serde::de::Error>::missing_field($rw)
                    })?, )*
                    $( $mrf: $mrf.ok_or_else(|| {
                        <::serde_json::Error as ::serde::de::Error>::missing_field($mrw)
                    })?, )*
                    $( $of, )*
                    $( $mof, )*
                    extra,
                })
            }
        }

        impl $crate::macros::MovedFrom for $ty {
            fn moved_from(
                value: ::serde_json::Value,
            ) -> ::std::result::Result<Self, ::serde_json::Error> {
                Self::from_value(value)
            }
        }
    };
    (
        $ty:ident, $what:literal,
        required { $($rf:ident : $rw:literal),* $(,)? }
        optional { $($of:ident : $ow:literal),* $(,)? }
    ) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct Members;
                impl<'de> ::serde::de::Visitor<'de> for Members {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> ::std::result::Result<$ty, A::Error> {
                        use ::serde::de::Error as _;
                        $( let mut $rf = None; )*
                        $( let mut $of = None; )*
                        let mut extra = $crate::types::JsonObject::new();
                        while let Some(key) = map.next_key::<String>()? {
                            match key.as_str() {
                                $( $rw => {
                                    if $rf.is_some() {
                                        return Err(A::Error::duplicate_field($rw));
                                    }
                                    $rf = Some(map.next_value()?);
                                } )*
                                $( $ow => {
                                    if $of.is_some() {
                                        return Err(A::Error::duplicate_field($ow));
                                    }
                                    $of = Some(map.next_value()?);
                                } )*
                                _ => {
                                    let value = map.next_value()?;
                                    extra.insert(key, value);
                                }
                            }
                        }
                        Ok($ty {
                            $( $rf: $rf.ok_or_else(|| A::Error::missing_field($rw))?, )*
                            $( $of: $crate::macros::present($of), )*
                            extra,
                        })
                    }
                }
                deserializer.deserialize_map(Members)
            }
        }
    };
}

/// An optional member as read: `None` when absent, else what it held
/// (`null` being `None` too).
pub(crate) fn present<T>(member: Option<Option<T>>) -> Option<T> {
    member.flatten()
}

/// A member that is JSON as it is (or made of such types), taken from a
/// `Value` without rebuilding it; anything else fails as serde fails it.
pub(crate) trait MovedFrom: Sized + serde::de::DeserializeOwned {
    fn moved_from(value: serde_json::Value) -> Result<Self, serde_json::Error>;
}

impl MovedFrom for serde_json::Value {
    fn moved_from(value: serde_json::Value) -> Result<Self, serde_json::Error> {
        Ok(value)
    }
}

impl MovedFrom for serde_json::Map<String, serde_json::Value> {
    fn moved_from(value: serde_json::Value) -> Result<Self, serde_json::Error> {
        match value {
            serde_json::Value::Object(map) => Ok(map),
            other => serde_json::from_value(other),
        }
    }
}

impl<T: MovedFrom> MovedFrom for Vec<T> {
    fn moved_from(value: serde_json::Value) -> Result<Self, serde_json::Error> {
        match value {
            serde_json::Value::Array(items) => items.into_iter().map(T::moved_from).collect(),
            other => serde_json::from_value(other),
        }
    }
}

/// An optional moved member: `null` reads as absent, as everywhere.
pub(crate) fn moved_option<T: MovedFrom>(
    value: serde_json::Value,
) -> Result<Option<T>, serde_json::Error> {
    match value {
        serde_json::Value::Null => Ok(None),
        value => T::moved_from(value).map(Some),
    }
}

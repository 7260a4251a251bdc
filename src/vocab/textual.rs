//! Serde for the small values users type as text (`"linear"`, `"1920x1280"`, `"mot"`): they
//! serialise as that text and deserialise through their `FromStr`, so a manifest, a sidecar
//! and the command line accept exactly the same words with the same error messages.

/// Implements `Serialize` (as its `Display` text) and `Deserialize` (through `FromStr` with a
/// `String` error) for a type.
macro_rules! serde_as_text {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct TextVisitor;
                impl serde::de::Visitor<'_> for TextVisitor {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        write!(f, "a string")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse::<$t>().map_err(E::custom)
                    }
                }
                d.deserialize_str(TextVisitor)
            }
        }
    };
}

pub(crate) use serde_as_text;

/// Implements `schemars::JsonSchema` for a type whose serde is hand-written, from a
/// `schemars::Schema` expression (see [`names`], [`pattern`]): the schema says what that
/// serde accepts, which `#[derive(JsonSchema)]` cannot see.
macro_rules! json_schema_as {
    ($t:ty, $name:literal, $schema:expr) => {
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $schema
            }
        }
    };
}

pub(crate) use json_schema_as;

/// A string that is one of `names`, exactly.
pub(crate) fn names(description: &str, names: &[&str]) -> schemars::Schema {
    schemars::json_schema!({
        "description": description,
        "type": "string",
        "enum": names,
    })
}

/// A string matching `pattern` (an ECMA-262 regular expression, anchored by the caller).
pub(crate) fn pattern(description: &str, pattern: &str) -> schemars::Schema {
    schemars::json_schema!({
        "description": description,
        "type": "string",
        "pattern": pattern,
    })
}

/// The regular expression of `names` in any case, with blanks around (what a `FromStr` that
/// trims and lower-cases accepts): `mot` is `[mM][oO][tT]`.
pub(crate) fn caseless(names: &[&str]) -> String {
    format!("^\\s*({})\\s*$", caseless_words(names))
}

/// `names` in any case, as alternatives (`[mM][oO][tT]|...`), without anchors.
pub(crate) fn caseless_words(names: &[&str]) -> String {
    let alternatives: Vec<String> = names
        .iter()
        .map(|name| {
            name.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                    } else if r".^$|?*+()[]{}\/".contains(c) {
                        format!("\\{c}")
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        })
        .collect();
    alternatives.join("|")
}

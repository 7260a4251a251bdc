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

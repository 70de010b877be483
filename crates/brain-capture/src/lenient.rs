//! Lenient field readers for JSON written by other programs (hook input, transcripts): a field
//! of an unexpected type costs that field, never the record, and is skipped without being
//! kept (`IgnoredAny`, which serde_json walks without recursion).

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A string, or `None` for any other JSON value.
pub fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    deserializer.deserialize_any(LenientString)
}

/// A list of strings; other values (and non-string elements) are skipped.
pub fn strings<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    deserializer.deserialize_any(Collect { what: Collecting::Strings })
}

/// The texts of a content field: a string, an object's `text`, or a list of either (the
/// content parts of Gemini CLI and Codex messages); anything else gives none.
pub fn texts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    deserializer.deserialize_any(Collect { what: Collecting::Texts })
}

/// The keys of an object (e.g. the paths of a Codex patch's `changes`); none for any other value.
pub fn keys<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    deserializer.deserialize_any(Collect { what: Collecting::Keys })
}

macro_rules! ignore_scalars {
    ($value:ty, $empty:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$value, E> {
            Ok($empty)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$value, E> {
            Ok($empty)
        }
    };
}

struct LenientString;

impl<'de> Visitor<'de> for LenientString {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<String>, E> {
        Ok(Some(value.to_string()))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Option<String>, E> {
        Ok(Some(value))
    }
    ignore_scalars!(Option<String>, None);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<String>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

#[derive(Clone, Copy)]
enum Collecting {
    Strings,
    Texts,
    Keys,
}

struct Collect {
    what: Collecting,
}

impl<'de> Visitor<'de> for Collect {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Vec<String>, E> {
        Ok(match self.what {
            Collecting::Texts => vec![value.to_string()],
            Collecting::Strings | Collecting::Keys => Vec::new(),
        })
    }
    ignore_scalars!(Vec<String>, Vec::new());
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut out = Vec::new();
        match self.what {
            Collecting::Strings => {
                while let Some(item) = seq.next_element_seed(Seed(LenientString))? {
                    out.extend(item);
                }
            }
            Collecting::Texts => {
                // One level: a list of strings or of parts with a `text`.
                while let Some(item) = seq.next_element_seed(Seed(TextPart))? {
                    out.extend(item);
                }
            }
            Collecting::Keys => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<String>, A::Error> {
        match self.what {
            Collecting::Texts => TextPart.visit_map(map).map(|text| text.into_iter().collect()),
            Collecting::Keys => {
                let mut map = map;
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(keys)
            }
            Collecting::Strings => {
                let mut map = map;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Vec::new())
            }
        }
    }
}

/// A string, or the `text` string of an object.
struct TextPart;

impl<'de> Visitor<'de> for TextPart {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an object with a text")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<String>, E> {
        Ok(Some(value.to_string()))
    }
    ignore_scalars!(Option<String>, None);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<String>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
        let mut text = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "text" {
                text = map.next_value_seed(Seed(LenientString))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(text)
    }
}

/// A JSON object deserialized as `T`; any other JSON value is an error (a derived struct
/// would otherwise accept a list of its fields).
pub struct ObjectOnly<T>(pub T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = ObjectOnly<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectOnly<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(ObjectOnly)
            }
        }
        deserializer.deserialize_map(ObjectVisitor(std::marker::PhantomData))
    }
}

struct Seed<V>(V);

impl<'de, V: Visitor<'de>> de::DeserializeSeed<'de> for Seed<V> {
    type Value = V::Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        deserializer.deserialize_any(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "string")]
        s: Option<String>,
        #[serde(default, deserialize_with = "strings")]
        list: Vec<String>,
        #[serde(default, deserialize_with = "texts")]
        content: Vec<String>,
        #[serde(default, deserialize_with = "keys")]
        changes: Vec<String>,
    }

    fn probe(json: &str) -> Probe {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn odd_shapes_cost_the_field_only() {
        let p = probe(r#"{"s": [1, {"a": 2}], "list": ["a", 2, "b", {"c": 1}], "content": 7, "changes": "x"}"#);
        assert_eq!((p.s, p.list, p.content, p.changes), (None, vec!["a".into(), "b".into()], vec![], vec![]));
        let p =
            probe(r#"{"content": [{"text": "one"}, "two", {"image": 1}, [3]], "changes": {"/a.rs": {}, "/b.rs": 1}}"#);
        assert_eq!(p.content, vec!["one", "two"]);
        assert_eq!(p.changes, vec!["/a.rs", "/b.rs"]);
        assert_eq!(probe(r#"{"content": "plain"}"#).content, vec!["plain"]);
        assert_eq!(probe(r#"{"content": {"text": "part"}}"#).content, vec!["part"]);
    }
}

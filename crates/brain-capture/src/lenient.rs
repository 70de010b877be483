//! Lenient field readers for JSON written by other programs (hook input, transcripts): a field
//! of an unexpected type costs that field, never the record, and is skipped without being
//! kept (`IgnoredAny`, which serde_json walks without recursion). A text refused for a lone
//! UTF-16 surrogate escape is mended and read again ([`mend_lone_surrogates`]).

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

/// `json` with every lone UTF-16 surrogate escape replaced by `\ufffd` (U+FFFD, the
/// replacement character), or `None` when it holds none. A surrogate escape (`\ud800` to
/// `\udfff`) is lone unless it is a high one (`\ud800` to `\udbff`) followed at once by a low
/// one (`\udc00` to `\udfff`). serde_json refuses a whole document for one lone surrogate, and
/// Node's `JSON.stringify` writes one for a string cut inside an emoji, so a reader calls this
/// when a parse fails and reads the mended text again. Escapes are walked from the start, a
/// backslash and the byte after it at a time, so an escaped backslash followed by `u`
/// (`\\ud83d`, which is text) is left as it is.
pub fn mend_lone_surrogates(json: &[u8]) -> Option<Vec<u8>> {
    let mut mended: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut index = 0;
    while let Some(offset) = memchr::memchr(b'\\', &json[index..]) {
        let at = index + offset;
        let Some(unit) = utf16_escape(json, at) else {
            // Another escape (`\\`, `\"`, `\n`, …): its second byte is not the start of one.
            index = (at + 2).min(json.len());
            continue;
        };
        let is_high = (0xD800..=0xDBFF).contains(&unit);
        let is_low = (0xDC00..=0xDFFF).contains(&unit);
        if !is_high && !is_low {
            index = at + 6;
            continue;
        }
        if is_high && utf16_escape(json, at + 6).is_some_and(|next| (0xDC00..=0xDFFF).contains(&next)) {
            index = at + 12;
            continue;
        }
        let out = mended.get_or_insert_with(|| Vec::with_capacity(json.len()));
        out.extend_from_slice(&json[copied..at]);
        out.extend_from_slice(b"\\ufffd");
        copied = at + 6;
        index = at + 6;
    }
    let mut out = mended?;
    out.extend_from_slice(&json[copied..]);
    Some(out)
}

/// The UTF-16 code unit of the `\uXXXX` escape starting at `at`, when there is one.
fn utf16_escape(json: &[u8], at: usize) -> Option<u16> {
    let escape = json.get(at..at + 6)?;
    let is_escape = escape.starts_with(b"\\u") && escape[2..].iter().all(u8::is_ascii_hexdigit);
    if !is_escape {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()
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

    fn mended(json: &str) -> Option<String> {
        mend_lone_surrogates(json.as_bytes()).map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn lone_surrogate_escapes_are_mended_and_everything_else_kept() {
        // A string cut inside an emoji: its high surrogate alone, or its low one.
        assert_eq!(mended(r#"{"prompt":"fix it \ud83d"}"#).as_deref(), Some(r#"{"prompt":"fix it \ufffd"}"#));
        assert_eq!(mended(r#"{"prompt":"\uDE00 then"}"#).as_deref(), Some(r#"{"prompt":"\ufffd then"}"#));
        // A high surrogate followed by an escape that is not a low one; then a valid pair.
        assert_eq!(mended(r#""\ud83d\u0041\ud83d\ude00""#).as_deref(), Some(r#""\ufffd\u0041\ud83d\ude00""#));
        assert_eq!(mended(r#""\ud83d\ud83d\ude00\ude00""#).as_deref(), Some(r#""\ufffd\ud83d\ude00\ufffd""#));
        // Nothing to mend: a valid pair, other escapes, an escaped backslash before `ud83d`
        // (text, not an escape), a cut escape, none at all.
        for kept in [
            r#""\ud83d\ude00""#,
            r#""\u00e9\n\"\/""#,
            r#""\\ud83d""#,
            r#""\\\\ud83d \\\"""#,
            r#""\ud83"#,
            r#""\"#,
            "plain",
            "",
        ] {
            assert_eq!(mended(kept), None, "{kept}");
        }
        // After an escaped backslash, a real lone escape is still found.
        assert_eq!(mended(r#""\\\ud83d""#).as_deref(), Some(r#""\\\ufffd""#));

        // What serde_json refused, it reads once mended, with U+FFFD where the cut was.
        let cut = r#"{"s":"fix it \ud83d"}"#;
        assert!(serde_json::from_str::<Probe>(cut).is_err());
        assert_eq!(probe(&mended(cut).unwrap()).s.as_deref(), Some("fix it \u{fffd}"));
        let pair = r#"{"s":"\ud83d\ude00"}"#;
        assert_eq!(probe(pair).s.as_deref(), Some("\u{1f600}"));
    }
}

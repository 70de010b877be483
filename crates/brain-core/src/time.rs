//! Timestamps: RFC 3339 UTC at every edge, whole seconds inside.

/// The one timestamp type of the domain (UTC instant).
pub type Timestamp = jiff::Timestamp;

/// Parses an RFC 3339 timestamp (`2026-11-21T10:00:00Z`, offsets allowed).
pub fn parse_timestamp(text: &str) -> Result<Timestamp, String> {
    text.trim()
        .parse::<Timestamp>()
        .map_err(|err| format!("invalid timestamp {text:?} (expected RFC 3339 like 2026-11-21T10:00:00Z): {err}"))
}

/// Formats a timestamp as RFC 3339 UTC with second precision (`2026-11-21T10:00:00Z`).
pub fn format_timestamp(timestamp: Timestamp) -> String {
    // Truncating to whole seconds keeps exports and documents stable and compact.
    let seconds = timestamp.as_second();
    let whole = Timestamp::from_second(seconds).unwrap_or(timestamp);
    whole.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Age in fractional days between `then` and `now` (never negative).
pub fn age_days(then: Timestamp, now: Timestamp) -> f64 {
    let seconds = now.as_second() - then.as_second();
    (seconds.max(0) as f64) / 86_400.0
}

/// Serde helpers so on-disk and wire forms are RFC 3339 strings with whole seconds.
pub mod serde_rfc3339 {
    use super::{Timestamp, format_timestamp, parse_timestamp};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Timestamp, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_timestamp(*value))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_timestamp(&text).map_err(serde::de::Error::custom)
    }

    /// The same for optional timestamps (`null` or absent is `None`).
    pub mod option {
        use super::{Timestamp, format_timestamp, parse_timestamp};
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(value: &Option<Timestamp>, serializer: S) -> Result<S::Ok, S::Error> {
            match value {
                Some(timestamp) => serializer.serialize_str(&format_timestamp(*timestamp)),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Timestamp>, D::Error> {
            let text: Option<String> = Option::deserialize(deserializer)?;
            match text {
                None => Ok(None),
                Some(text) if text.trim().is_empty() => Ok(None),
                Some(text) => parse_timestamp(&text).map(Some).map_err(serde::de::Error::custom),
            }
        }
    }
}

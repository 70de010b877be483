//! The vault parser (frontmatter, its YAML subset, HTML-comment markers) and the derived
//! items: never panics, stays within the input, and every derived text is redacted. The
//! run's `-timeout` and `-rss_limit_mb` catch a quadratic blow-up (issue 11 item 2).
#![no_main]

use brain_core::redact::redact_str;
use brain_core::vault::{DEFAULT_MAX_BYTES, DerivedMarker, derived_items, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (doc, diagnostics) = parse("clusters/2026-11-21/fuzz.md", data, DEFAULT_MAX_BYTES);
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    for diagnostic in &diagnostics {
        assert!(u64::from(diagnostic.line) <= lines, "diagnostic line {} of {lines}", diagnostic.line);
    }
    for marker in &doc.markers {
        assert!(marker.span.start <= marker.span.end && marker.span.end <= data.len(), "{:?}", marker.span);
    }
    for derived in derived_items(&doc, data).0 {
        let content = match &derived {
            DerivedMarker::Item(item) => &item.content,
            DerivedMarker::Inject(inject) => &inject.content,
        };
        // Redacted at derivation: a second pass finds nothing.
        assert_eq!(redact_str(content), content.as_str());
    }
});

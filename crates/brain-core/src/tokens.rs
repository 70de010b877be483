//! Token counting and truncation (SPEC §3).

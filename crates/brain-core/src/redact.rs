//! Redaction of secrets before storage (SPEC §9).

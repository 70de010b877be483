//! Persistence for brain.

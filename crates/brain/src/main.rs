//! The brain binary.
fn main() {}

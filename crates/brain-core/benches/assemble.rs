//! Benchmark: assembling context from many items.
fn main() {
    divan::main();
}

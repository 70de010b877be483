//! Benchmark: marker parsing throughput.
fn main() {
    divan::main();
}

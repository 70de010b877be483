//! The hook's stdin: `brain_capture::hook_input::parse_input` on any bytes gives an input or an error,
//! never a panic; and `read_input`, which reads a stream in chunks and stops at the end of
//! the first JSON value, agrees with it however the bytes are split.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;

/// A reader that hands out `sizes` bytes at a time (cycling), as a pipe may.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [u8],
    turn: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let size = usize::from(self.sizes.get(self.turn % self.sizes.len().max(1)).copied().unwrap_or(7)).max(1);
        self.turn += 1;
        let count = size.min(buffer.len()).min(self.data.len());
        buffer[..count].copy_from_slice(&self.data[..count]);
        self.data = &self.data[count..];
        Ok(count)
    }
}

fuzz_target!(|data: &[u8]| {
    let (sizes, data) = data.split_at(data.len().min(4));
    let parsed = brain_capture::hook_input::parse_input(data);
    let read = brain_capture::hook_input::read_input(Chunked { data, sizes, turn: 0 });
    assert_eq!(
        format!("{:?}", parsed.map_err(|err| err.to_string())),
        format!("{:?}", read.map_err(|err| err.to_string())),
        "read_input and parse_input disagree"
    );
});

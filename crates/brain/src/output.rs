//! Stdout is data only: every command prints through `Out`, which treats a closed pipe
//! (`brain list | head`) as success.

use std::io::{self, Write};

use serde::Serialize;

/// Buffered stdout that exits quietly when the reader goes away.
pub struct Out {
    stdout: io::BufWriter<io::StdoutLock<'static>>,
}

impl Default for Out {
    fn default() -> Self {
        Out::new()
    }
}

impl Out {
    pub fn new() -> Out {
        Out { stdout: io::BufWriter::new(io::stdout().lock()) }
    }

    /// Writes one line.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let result = self.stdout.write_all(text.as_ref().as_bytes()).and_then(|()| self.stdout.write_all(b"\n"));
        handle(result);
    }

    /// Writes text as is.
    pub fn text(&mut self, text: impl AsRef<str>) {
        handle(self.stdout.write_all(text.as_ref().as_bytes()));
    }

    /// Writes a value as pretty JSON followed by a newline.
    pub fn json<T: Serialize + ?Sized>(&mut self, value: &T) {
        let text = serde_json::to_string_pretty(value).unwrap_or_else(|err| format!("{{\"error\":\"{err}\"}}"));
        self.line(text);
    }

    /// Writes a value as one compact JSON line (JSONL).
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) {
        let text = serde_json::to_string(value).unwrap_or_else(|err| format!("{{\"error\":\"{err}\"}}"));
        self.line(text);
    }

    pub fn flush(&mut self) {
        handle(self.stdout.flush());
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = self.stdout.flush();
    }
}

fn handle(result: io::Result<()>) {
    if let Err(err) = result {
        if err.kind() == io::ErrorKind::BrokenPipe {
            // The reader is gone (`| head`): not an error (SPEC §7.1).
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {err}");
        std::process::exit(2);
    }
}

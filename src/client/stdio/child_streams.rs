//! What a stdio child writes, read safely: its stderr as lines in constant memory
//! ([`TailLines`]), and its stdout watched for lines that cannot be JSON-RPC ([`LineWatch`]).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The most of one stderr line kept (its last bytes): a child that writes hundreds of megabytes
/// without a newline must not make this process grow with it.
pub(super) const MAX_STDERR_LINE: usize = 4096;

/// Reads a child's stderr line by line, keeping at most the last [`MAX_STDERR_LINE`] bytes of
/// each line (a cut line starts with `…`), in constant memory whatever the child writes.
pub(super) struct TailLines<R> {
    reader: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    line: Vec<u8>,
    cut: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> TailLines<R> {
    pub(super) fn new(reader: R) -> Self {
        TailLines {
            reader,
            buf: vec![0; 8192].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::new(),
            cut: false,
            eof: false,
        }
    }

    /// The next line (without its newline), or `None` at the end.
    pub(super) async fn next_line(&mut self) -> Option<String> {
        use tokio::io::AsyncReadExt as _;
        loop {
            if self.start < self.end {
                let chunk = &self.buf[self.start..self.end];
                let newline = chunk.iter().position(|b| *b == b'\n');
                let take = newline.unwrap_or(chunk.len());
                self.line.extend_from_slice(&chunk[..take]);
                if self.line.len() > 2 * MAX_STDERR_LINE {
                    let excess = self.line.len() - MAX_STDERR_LINE;
                    self.line.drain(..excess);
                    self.cut = true;
                }
                match newline {
                    Some(at) => {
                        self.start += at + 1;
                        return Some(self.take_line());
                    }
                    None => self.start = self.end,
                }
            }
            if self.eof {
                return (!self.line.is_empty() || self.cut).then(|| self.take_line());
            }
            match self.reader.read(&mut self.buf).await {
                Ok(0) | Err(_) => self.eof = true,
                Ok(n) => {
                    self.start = 0;
                    self.end = n;
                }
            }
        }
    }

    fn take_line(&mut self) -> String {
        if self.line.len() > MAX_STDERR_LINE {
            let excess = self.line.len() - MAX_STDERR_LINE;
            self.line.drain(..excess);
            self.cut = true;
        }
        let text = String::from_utf8_lossy(&self.line);
        let line = if self.cut {
            format!("…{text}")
        } else {
            text.into_owned()
        };
        self.line.clear();
        self.line.shrink_to(2 * MAX_STDERR_LINE);
        self.cut = false;
        line
    }
}

/// Counts stdout lines that cannot be JSON-RPC (their first non-blank byte is not `{` or `[`),
/// so a handshake that fails on a server printing banners to stdout says so.
pub(super) struct LineWatch<R> {
    inner: R,
    at_line_start: bool,
    garbage: Arc<AtomicUsize>,
}

impl<R> LineWatch<R> {
    pub(super) fn new(inner: R, garbage: Arc<AtomicUsize>) -> Self {
        LineWatch {
            inner,
            at_line_start: true,
            garbage,
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                self.at_line_start = true;
            } else if self.at_line_start && !b.is_ascii_whitespace() {
                self.at_line_start = false;
                if b != b'{' && b != b'[' {
                    self.garbage.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll {
            this.scan(&buf.filled()[before..]);
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    use crate::client::stdio::child_streams::*;

    #[tokio::test]
    async fn a_stderr_line_without_end_keeps_only_its_last_bytes() {
        let mut flood = vec![b'x'; 10 * 1024 * 1024];
        flood.extend_from_slice(b"END\nnext\nlast");
        let mut lines = TailLines::new(&flood[..]);
        let first = lines.next_line().await.expect("a line");
        assert_eq!(first.len(), '…'.len_utf8() + MAX_STDERR_LINE);
        assert!(first.starts_with('…') && first.ends_with("xEND"));
        assert!(lines.line.capacity() <= 2 * MAX_STDERR_LINE + 8192);
        assert_eq!(lines.next_line().await.as_deref(), Some("next"));
        assert_eq!(lines.next_line().await.as_deref(), Some("last"));
        assert_eq!(lines.next_line().await, None);
    }

    #[test]
    fn lines_that_do_not_start_a_json_value_are_counted() {
        let count = Arc::new(AtomicUsize::new(0));
        let mut watch = LineWatch::new(tokio::io::empty(), count.clone());
        watch.scan(b"{\"jsonrpc\":\"2.0\"}\nStarting...\n  [1]\n\nready");
        watch.scan(b" now\n");
        assert_eq!(count.load(Ordering::Relaxed), 2);
    }
}

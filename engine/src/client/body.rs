//! A sized request body that reports when the transport has taken all of it.

use std::io::{self, Read};
use std::sync::mpsc::Sender;

/// Reader over a JSON body that sends one `()` on `done` once its last byte has been read.
///
/// Invariant: the signal is sent at most once, and only after every byte went to the transport
/// (reqwest stops reading a sized body at its length, so the signal cannot wait for a 0-byte read).
/// If the transport drops the body early, `done` is dropped unsent and the receiver sees a hang-up.
pub(crate) struct Notifying {
    bytes: Vec<u8>,
    pos: usize,
    done: Option<Sender<()>>,
}

impl Read for Notifying {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.pos += n;
        if self.pos >= self.bytes.len() {
            if let Some(tx) = self.done.take() {
                let _ = tx.send(());
            }
        }
        Ok(n)
    }
}

/// A sized body over `bytes`; `done` is signalled when the transport has read the last byte.
pub(crate) fn notifying(bytes: Vec<u8>, done: Sender<()>) -> reqwest::blocking::Body {
    let len = bytes.len() as u64;
    reqwest::blocking::Body::sized(
        Notifying {
            bytes,
            pos: 0,
            done: Some(done),
        },
        len,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_once_after_the_last_byte() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut r = Notifying {
            bytes: b"abcdef".to_vec(),
            pos: 0,
            done: Some(tx),
        };
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).ok(), Some(4));
        assert!(rx.try_recv().is_err());
        assert_eq!(r.read(&mut buf).ok(), Some(2));
        assert!(rx.try_recv().is_ok());
        assert_eq!(r.read(&mut buf).ok(), Some(0));
        assert!(rx.try_recv().is_err());
    }
}

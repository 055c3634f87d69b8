//! A sized request body that reports when the transport has taken all of it.

use std::io::{self, Read};
use std::sync::mpsc::Sender;

/// Reader over a JSON body that sends one `()` on `done` once its last byte has been read.
///
/// reqwest's blocking client pumps the body into a one-slot channel, possibly before the connection
/// exists: the first chunk is accepted at once. So the body is handed out as three reads (all but
/// two bytes, one byte, one byte): the third read only happens after hyper has taken the first chunk
/// from the channel, i.e. the connection is up and the request is being written. The signal fires on
/// that last read. Invariants: at most one signal; no signal when the connection never came up (the
/// body is dropped unsent and the receiver sees a hang-up); the last two bytes may still be in the
/// client's buffers when the signal fires.
pub(crate) struct Notifying {
    bytes: Vec<u8>,
    pos: usize,
    done: Option<Sender<()>>,
}

impl Read for Notifying {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        // Hold back the last two bytes so that they need two more reads (see the type docs).
        let cap = if rest.len() > 2 { rest.len() - 2 } else { 1 };
        let n = rest.len().min(buf.len()).min(cap);
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
pub(crate) fn notifying(mut bytes: Vec<u8>, done: Sender<()>) -> reqwest::blocking::Body {
    // JSON allows trailing whitespace; three bytes are needed for the three reads.
    while bytes.len() < 3 {
        bytes.push(b'\n');
    }
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
        let mut buf = [0u8; 64];
        assert_eq!(r.read(&mut buf).ok(), Some(4));
        assert!(rx.try_recv().is_err());
        assert_eq!(r.read(&mut buf).ok(), Some(1));
        assert!(rx.try_recv().is_err());
        assert_eq!(r.read(&mut buf).ok(), Some(1));
        assert!(rx.try_recv().is_ok());
        assert_eq!(r.read(&mut buf).ok(), Some(0));
        assert!(rx.try_recv().is_err());
    }
}

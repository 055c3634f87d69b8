//! The identities of settled messages, kept compactly for the life of a session.
//!
//! # Design
//!
//! Exactly-once needs the identity of every message the server holds (or refused for good),
//! never its text. Each identity is kept as a 64-bit xxh3 digest ([`Identity`]):
//!
//! | identity | digest of |
//! |---|---|
//! | a settled message's key | `k` `0` then its [`DedupKey`] text (`turn:<id>:<role>` or `hash:<role>:<xxh3>`) |
//! | a message the server holds without a turn id | `c` `0` role `0` then its content as held |
//!
//! Two different identities share a digest with odds of about `n / 2^64` per new message
//! (below 10^-13 at a million settled messages): such a message would count as settled.
//!
//! The set is a sorted vector (what a snapshot held, decoded with one copy) plus a sorted
//! tree of what was added since, so a hook that folds a long session's snapshot pays one
//! `memcpy`, never one allocation per turn. A snapshot stores it as one byte string of
//! little-endian `u64`s in increasing order.

use std::collections::BTreeSet;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::turn::{DedupKey, Role};

/// The digest of one identity.
pub type Identity = u64;

/// The identity of a settled message's key.
pub fn key_identity(key: &DedupKey) -> Identity {
    digest(&[b"k", key.as_str().as_bytes()])
}

/// The identity of a message the server holds, matched by content (it names no turn).
pub fn content_identity(role: Role, content: &str) -> Identity {
    digest(&[b"c", role.as_str().as_bytes(), content.as_bytes()])
}

fn digest(parts: &[&[u8]]) -> Identity {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update(&[0]);
        }
        h.update(p);
    }
    h.digest()
}

/// A set of [`Identity`]s (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct DeliveredSet {
    /// Sorted, no duplicates; disjoint from `added`.
    base: Vec<Identity>,
    added: BTreeSet<Identity>,
}

impl DeliveredSet {
    /// Whether `id` is in the set.
    pub fn contains(&self, id: Identity) -> bool {
        self.base.binary_search(&id).is_ok() || self.added.contains(&id)
    }

    /// Adds `id`; false when it was there already.
    pub fn insert(&mut self, id: Identity) -> bool {
        if self.base.binary_search(&id).is_ok() {
            return false;
        }
        self.added.insert(id)
    }

    /// How many identities the set holds.
    pub fn len(&self) -> usize {
        self.base.len() + self.added.len()
    }

    /// The set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every identity, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = Identity> + '_ {
        Merge {
            a: self.base.iter().copied().peekable(),
            b: self.added.iter().copied().peekable(),
        }
    }
}

impl PartialEq for DeliveredSet {
    fn eq(&self, other: &DeliveredSet) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for DeliveredSet {}

/// Two increasing iterators merged into one (they hold no common item).
struct Merge<A: Iterator<Item = Identity>, B: Iterator<Item = Identity>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A: Iterator<Item = Identity>, B: Iterator<Item = Identity>> Iterator for Merge<A, B> {
    type Item = Identity;

    fn next(&mut self) -> Option<Identity> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if x <= y => self.a.next(),
            (Some(_), Some(_)) | (None, _) => self.b.next(),
            (Some(_), None) => self.a.next(),
        }
    }
}

impl Serialize for DeliveredSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return serializer.collect_seq(self.iter());
        }
        // Format: { len:varint | len bytes: u64 LE identities, increasing }
        let mut bytes = Vec::with_capacity(self.len() * 8);
        for id in self.iter() {
            bytes.extend_from_slice(&id.to_le_bytes());
        }
        serializer.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for DeliveredSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DeliveredSet, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_seq(SetVisitor)
        } else {
            deserializer.deserialize_byte_buf(SetVisitor)
        }
    }
}

struct SetVisitor;

impl SetVisitor {
    fn from_ids(mut base: Vec<Identity>) -> DeliveredSet {
        // Written sorted; a set that is not (hand-made) is sorted rather than refused.
        if !base.windows(2).all(|w| matches!(w, [a, b] if a < b)) {
            base.sort_unstable();
            base.dedup();
        }
        DeliveredSet {
            base,
            added: BTreeSet::new(),
        }
    }
}

impl<'de> Visitor<'de> for SetVisitor {
    type Value = DeliveredSet;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a byte string of little-endian u64 identities")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<DeliveredSet, E> {
        if !v.len().is_multiple_of(8) {
            return Err(E::invalid_length(v.len(), &self));
        }
        let ids = v
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        Ok(Self::from_ids(ids))
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<DeliveredSet, E> {
        self.visit_bytes(&v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DeliveredSet, A::Error> {
        let mut ids = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(id) = seq.next_element::<Identity>()? {
            ids.push(id);
        }
        Ok(Self::from_ids(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(s: &DeliveredSet) -> DeliveredSet {
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(s, cfg).expect("encode");
        let (back, used) =
            bincode::serde::decode_from_slice::<DeliveredSet, _>(&bytes, cfg).expect("decode");
        assert_eq!(used, bytes.len());
        back
    }

    proptest! {
        /// Inserting in any order, before or after a snapshot round trip, gives one set that
        /// answers `contains` for exactly what was inserted.
        #[test]
        fn the_set_is_what_was_inserted(
            before in proptest::collection::vec(any::<u64>(), 0..64),
            after in proptest::collection::vec(any::<u64>(), 0..64),
            probe in any::<u64>(),
        ) {
            let mut plain = DeliveredSet::default();
            for id in before.iter().chain(&after) {
                plain.insert(*id);
            }
            let mut snap = DeliveredSet::default();
            for id in &before {
                snap.insert(*id);
            }
            let mut resumed = round_trip(&snap);
            for id in &after {
                resumed.insert(*id);
            }
            prop_assert_eq!(&plain, &resumed);
            prop_assert_eq!(&round_trip(&resumed), &plain);
            let all: BTreeSet<u64> = before.iter().chain(&after).copied().collect();
            prop_assert_eq!(plain.iter().collect::<Vec<_>>(), all.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(resumed.contains(probe), all.contains(&probe));
        }
    }

    #[test]
    fn key_and_content_identities_never_share_a_domain() {
        let key = DedupKey::for_turn("t", Role::User);
        assert_ne!(
            key_identity(&key),
            content_identity(Role::User, key.as_str())
        );
        assert_ne!(
            content_identity(Role::User, "x"),
            content_identity(Role::Assistant, "x")
        );
    }

    #[test]
    fn a_stored_set_is_eight_bytes_an_identity() {
        let mut s = DeliveredSet::default();
        for i in 0..1000u64 {
            s.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        let bytes = bincode::serde::encode_to_vec(&s, bincode::config::standard()).expect("enc");
        assert!(bytes.len() <= 8 * 1000 + 3, "{}", bytes.len());
    }
}

//! Reconciliation waits until an unanswered in-doubt send has settled: a dead
//! worker's request may still be in the server's hands.

use std::cell::RefCell;

use ov_engine::delivery::{
    deliver, CommitReply, DeliverySettings, HeldMessage, OutgoingMessage, Transport, TransportError,
};
use ov_engine::event::{Event, PlannedMessage};
use ov_engine::store::{now_ms, SessionStore};
use ov_engine::turn::{DedupKey, Role};
use ov_journal::Durability;

/// Holds whatever was "applied" and notes when it was asked.
#[derive(Default)]
struct Server {
    held: RefCell<Vec<HeldMessage>>,
    asked_at: RefCell<Vec<u64>>,
    adds: RefCell<usize>,
}

impl Transport for Server {
    fn add_batch(
        &self,
        _: &str,
        m: &[OutgoingMessage],
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        on_sent();
        *self.adds.borrow_mut() += m.len();
        Ok(())
    }
    fn add_one(
        &self,
        _: &str,
        _: &OutgoingMessage,
        on_sent: &dyn Fn(),
    ) -> Result<(), TransportError> {
        on_sent();
        *self.adds.borrow_mut() += 1;
        Ok(())
    }
    fn commit(&self, _: &str, _: &dyn Fn()) -> Result<CommitReply, TransportError> {
        Ok(CommitReply::default())
    }
    fn commit_count(&self, _: &str) -> Result<Option<u64>, TransportError> {
        Ok(Some(0))
    }
    fn held_messages(&self, _: &str) -> Result<Vec<HeldMessage>, TransportError> {
        self.asked_at.borrow_mut().push(now_ms());
        Ok(self.held.borrow().clone())
    }
}

#[test]
fn a_young_in_doubt_send_is_reconciled_only_once_settled() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    let key = DedupKey::for_turn("t1", Role::User);
    store
        .append(
            Event::MessagesPlanned {
                messages: vec![PlannedMessage {
                    key: key.clone(),
                    turn_id: Some("t1".into()),
                    role: Role::User,
                    content: "hi".into(),
                    raw_len: 2,
                    interrupted: false,
                    created_at_ms: None,
                }],
            },
            Durability::Buffered,
        )
        .expect("plan");
    // A worker died right after its request left: no outcome.
    let started = store
        .append(
            Event::SendStarted {
                send_id: 0,
                keys: vec![key.clone()],
                single: false,
            },
            Durability::Sync,
        )
        .expect("start")
        .at_ms;
    let server = Server::default();
    let mut settings = DeliverySettings::new("zc-s".into());
    settings.in_doubt_settle_ms = 400;
    settings.commit_token_threshold = u64::MAX;
    deliver(&store, None, Some(&server), &settings).expect("deliver");
    let asked = server
        .asked_at
        .borrow()
        .first()
        .copied()
        .expect("the server was asked");
    assert!(
        asked >= started + 400,
        "asked {} ms after the send started, before it settled",
        asked - started
    );
    // Absent on the server: resent exactly once, and acknowledged.
    assert_eq!(*server.adds.borrow(), 1);
    let st = store.fold().expect("fold").state;
    assert!(st.sends.is_empty() && st.outbox().is_empty());
    assert!(st.is_delivered(&key));
}

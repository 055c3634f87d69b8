//! Which refusals set a message aside (the server refused the message itself)
//! and which leave it pending (nothing is wrong with the message).

use ov_engine::event::{Event, PlannedMessage};
use ov_engine::store::SessionStore;
use ov_engine::turn::{DedupKey, Role};
use ov_journal::Durability;

fn planned(turn: &str, role: Role) -> PlannedMessage {
    PlannedMessage {
        key: DedupKey::for_turn(turn, role),
        turn_id: Some(turn.into()),
        role,
        content: format!("{turn} {}", role.as_str()),
        raw_len: 10,
        interrupted: false,
        created_at_ms: None,
    }
}

#[test]
fn auth_and_rate_limit_refusals_never_set_a_message_aside() {
    use ov_engine::projector::MessageStatus;
    let tmp = tempfile::tempdir().expect("tmp");
    let store = SessionStore::open(&tmp.path().join("j")).expect("open");
    let key = DedupKey::for_turn("t1", Role::User);
    store
        .append(
            Event::MessagesPlanned {
                messages: vec![planned("t1", Role::User)],
            },
            Durability::Buffered,
        )
        .expect("plan");
    // A wrong key (401/403) and rate limiting (429), many times, batch and single.
    for (i, status) in [401u16, 403, 429, 401, 403, 429, 401, 403, 429, 401]
        .into_iter()
        .enumerate()
    {
        let send_id = i as u64;
        store
            .append(
                Event::SendStarted {
                    send_id,
                    keys: vec![key.clone()],
                    single: i % 2 == 0,
                },
                Durability::Buffered,
            )
            .expect("start");
        store
            .append(
                Event::SendFailed {
                    send_id,
                    status,
                    retryable: status == 429,
                    error: "refused".into(),
                    request_sent: true,
                },
                Durability::Buffered,
            )
            .expect("fail");
    }
    let st = store.fold().expect("fold").state;
    let rec = &st.messages[&key];
    assert_eq!(rec.status, MessageStatus::Pending, "{rec:?}");
    assert!(rec.content.is_some(), "content kept for the resend");
    // A refusal of the message itself does set it aside.
    store
        .append(
            Event::SendStarted {
                send_id: 99,
                keys: vec![key.clone()],
                single: true,
            },
            Durability::Buffered,
        )
        .expect("start");
    store
        .append(
            Event::SendFailed {
                send_id: 99,
                status: 413,
                retryable: false,
                error: "too large".into(),
                request_sent: true,
            },
            Durability::Buffered,
        )
        .expect("fail");
    let st = store.fold().expect("fold").state;
    assert!(matches!(
        st.messages[&key].status,
        MessageStatus::SetAside { status: 413, .. }
    ));
}

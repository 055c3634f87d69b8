//! The current project's memories first, in every recall tier: one ordering rule.
//!
//! The server ranks another project's memory below the current one's only by its
//! `other_peer_penalty`, whose default for preferences is 0.02: two projects' memories that both
//! match a query keep the server's score order. Recall asks for `OTHER_PROJECT_PENALTY`
//! (as tier 3 applies it itself, so that which items are picked leans the same way), and then
//! the items are ordered by [`current_first`]: the current project's (and the user's own) ahead
//! of other projects', each group in the order it had. In tiers 1 and 2 that moves the server's
//! rendered `<memory>` elements ([`current_project_first`]; a block with anything but whitespace
//! between its elements is left as the server wrote it), in tier 3 the ranked items.

use super::{block_uris, project_of};

const OPEN: &str = "<memory ";
const CLOSE: &str = "</memory>";

/// `rendered` with the `<memory>` elements of projects other than `actor` after the rest.
pub(super) fn current_project_first(rendered: &str, actor: Option<&str>) -> String {
    let Some(actor) = actor else {
        return rendered.to_owned();
    };
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while let Some(start) = rendered
        .get(at..)
        .and_then(|r| r.find(OPEN))
        .map(|i| at + i)
    {
        let Some(end) = rendered
            .get(start..)
            .and_then(|r| r.find(CLOSE))
            .map(|i| start + i + CLOSE.len())
        else {
            return rendered.to_owned();
        };
        spans.push((start, end));
        at = end;
    }
    let gaps_blank = spans.windows(2).all(
        |w| matches!(w, [a, b] if rendered.get(a.1..b.0).is_some_and(|g| g.trim().is_empty())),
    );
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
        return rendered.to_owned();
    };
    if !gaps_blank {
        return rendered.to_owned();
    }
    let uri_of = |&(s, e): &(usize, usize)| {
        block_uris(rendered.get(s..e).unwrap_or_default())
            .into_iter()
            .next()
            .unwrap_or_default()
    };
    let ordered = current_first(spans.clone(), |s| uri_of(s), Some(actor));
    let elements: Vec<&str> = ordered
        .iter()
        .map(|&(s, e)| rendered.get(s..e).unwrap_or_default())
        .collect();
    format!(
        "{}{}{}",
        rendered.get(..first.0).unwrap_or_default(),
        elements.join("\n"),
        rendered.get(last.1..).unwrap_or_default()
    )
}

/// `items` with those of projects other than `actor` after the rest, each group in its order
/// (`uri` says where an item is from). Unchanged without an `actor`.
pub(super) fn current_first<T>(
    items: Vec<T>,
    uri: impl Fn(&T) -> String,
    actor: Option<&str>,
) -> Vec<T> {
    let Some(actor) = actor else {
        return items;
    };
    let (mine, theirs): (Vec<T>, Vec<T>) = items
        .into_iter()
        .partition(|i| project_of(&uri(i)).is_none_or(|p| p == actor));
    mine.into_iter().chain(theirs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(peer: &str, text: &str) -> String {
        format!("<memory uri=\"viking://user/u/peers/{peer}/memories/preferences/t.md\" type=\"preferences\">\n{text}\n</memory>")
    }

    #[test]
    fn the_current_projects_elements_move_ahead_in_order() {
        let own = "<memory uri=\"viking://user/u/memories/profile.md\">\nme\n</memory>";
        let rendered = [
            memory("beta", "b1"),
            memory("alpha", "a1"),
            own.to_owned(),
            memory("beta", "b2"),
            memory("alpha", "a2"),
        ]
        .join("\n");
        let got = current_project_first(&rendered, Some("alpha"));
        let pos = |t: &str| got.find(&format!("\n{t}\n")).expect(t);
        assert!(pos("a1") < pos("me") && pos("me") < pos("a2") && pos("a2") < pos("b1"));
        assert!(pos("b1") < pos("b2"));
        assert_eq!(got.len(), rendered.len());
        assert_eq!(current_project_first(&rendered, None), rendered);
    }

    #[test]
    fn ranked_items_put_the_current_project_first_in_their_order() {
        let uri = |p: &str, n: u8| format!("viking://user/u/peers/{p}/memories/m{n}.md");
        let items = vec![
            uri("beta", 1),
            uri("alpha", 1),
            "viking://user/u/memories/own.md".to_owned(),
            uri("beta", 2),
            uri("alpha", 2),
        ];
        let got = current_first(items.clone(), Clone::clone, Some("alpha"));
        assert_eq!(
            got,
            [
                uri("alpha", 1),
                "viking://user/u/memories/own.md".to_owned(),
                uri("alpha", 2),
                uri("beta", 1),
                uri("beta", 2)
            ]
        );
        assert_eq!(current_first(items.clone(), Clone::clone, None), items);
    }

    #[test]
    fn a_block_with_other_text_between_elements_is_left_alone() {
        let rendered = format!(
            "{}\n## other\n{}",
            memory("beta", "b1"),
            memory("alpha", "a1")
        );
        assert_eq!(current_project_first(&rendered, Some("alpha")), rendered);
        let unclosed = format!("{}\n<memory uri=\"x\">", memory("beta", "b1"));
        assert_eq!(current_project_first(&unclosed, Some("alpha")), unclosed);
    }
}

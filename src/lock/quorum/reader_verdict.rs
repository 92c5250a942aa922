//! Who holds a shared lock as a reader (`--shared`, see `kinds::shared`), judged from all
//! masters' readers: a reader holds it where a majority has its share.
//!
//! A master lists only its first live shares (1000 for `status`, 100 for `list`), but counts
//! them all (`ZCOUNT`): where more hold than a master listed, [`count_readers`] gives the
//! count the masters return, so that a report says "N shown of M" rather than N.

use std::time::Duration;

use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::shared::Shares;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// What one master has of a shared lock's readers, for `status`.
#[derive(Clone, Debug)]
pub struct ReadersInspection {
    pub master: Master,
    pub state: Result<Shares, NodeError>,
}

/// One reader that holds a share on a majority of the masters.
#[derive(Clone, Debug, PartialEq)]
pub struct Reader {
    pub token: String,
    /// How many masters have its share.
    pub masters: usize,
    /// The longest its share lasts there, unless renewed.
    pub expires_in: Duration,
    /// Its record, as some master keeps it.
    pub holder: Option<Holder>,
}

/// The readers that hold a share on a majority of the masters (a share on fewer is not held:
/// a partial attempt, or one on its way out), each once, most masters first.
pub fn judge_readers(inspections: &[ReadersInspection]) -> Vec<Reader> {
    let quorum = inspections.len() / 2 + 1;
    let mut seen: Vec<Reader> = Vec::new();
    for shares in inspections.iter().filter_map(|i| i.state.as_ref().ok()) {
        for share in &shares.shares {
            match seen.iter_mut().find(|reader| reader.token == share.token) {
                Some(reader) => {
                    reader.masters += 1;
                    reader.expires_in = reader.expires_in.max(share.expires_in);
                    if reader.holder.is_none() {
                        reader.holder.clone_from(&share.holder);
                    }
                }
                None => seen.push(Reader {
                    token: share.token.clone(),
                    masters: 1,
                    expires_in: share.expires_in,
                    holder: share.holder.clone(),
                }),
            }
        }
    }
    seen.retain(|reader| reader.masters >= quorum);
    seen.sort_by(|a, b| {
        b.masters
            .cmp(&a.masters)
            .then_with(|| a.token.cmp(&b.token))
    });
    seen
}

/// How many readers hold the lock, as the masters count them: the judged readers, unless some
/// master counted more live shares than it listed; then the count that a majority of the
/// masters each reach (a reader that holds has its share on a majority), or the judged
/// number if that is more.
pub fn count_readers(inspections: &[ReadersInspection], judged: usize) -> usize {
    let answers: Vec<&Shares> = inspections
        .iter()
        .filter_map(|i| i.state.as_ref().ok())
        .collect();
    if answers
        .iter()
        .all(|shares| shares.count <= shares.shares.len())
    {
        return judged;
    }
    let mut counts: Vec<usize> = answers.iter().map(|shares| shares.count).collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let quorum = inspections.len() / 2 + 1;
    let majority = counts
        .get(quorum - 1)
        .or(counts.last())
        .copied()
        .unwrap_or(0);
    majority.max(judged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::scripts::shared::Share;

    fn listed(count: usize, tokens: &[&str]) -> ReadersInspection {
        ReadersInspection {
            master: Master::parse("redis://127.0.0.1:6379").unwrap(),
            state: Ok(Shares {
                count,
                shares: tokens
                    .iter()
                    .map(|token| Share {
                        token: token.to_string(),
                        expires_in: Duration::from_secs(5),
                        holder: None,
                    })
                    .collect(),
            }),
        }
    }

    #[test]
    fn the_count_is_the_masters_where_they_listed_fewer_than_they_hold() {
        let all = [
            listed(2, &["a", "b"]),
            listed(2, &["a", "b"]),
            listed(1, &["a"]),
        ];
        assert_eq!(count_readers(&all, judge_readers(&all).len()), 2);
        let cut = [
            listed(250, &["a", "b"]),
            listed(249, &["a", "b"]),
            listed(7, &["a"]),
        ];
        assert_eq!(judge_readers(&cut).len(), 2);
        assert_eq!(count_readers(&cut, 2), 249);
        // Fewer answers than a majority: the most any master counts.
        assert_eq!(count_readers(&cut[2..], 1), 7);
    }
}

//! Who holds a shared lock as a reader (`--shared`, see `kinds::shared`), judged from all
//! masters' readers: a reader holds it where a majority has its share.

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

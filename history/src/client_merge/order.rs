//! The legacy placement (planted M2): messages kept in the order they first reached the
//! client, each page's new messages placed right after the last message of the page already
//! held (its anchor), a page without one appended at the end.

/// Keys in the order the legacy client placed them.
#[derive(Clone, Debug, Default)]
pub struct Arrival {
    keys: Vec<String>,
}

impl Arrival {
    /// A live or optimistic message: at the end, unless already placed.
    pub fn push(&mut self, key: &str) {
        if !self.keys.iter().any(|k| k == key) {
            self.keys.push(key.to_string());
        }
    }

    /// A page's keys (ascending seqs), each new one after the anchor before it.
    pub fn page(&mut self, keys: &[String]) {
        let mut anchor: Option<usize> = None;
        for key in keys {
            match self.keys.iter().position(|k| k == key) {
                Some(at) => anchor = Some(at),
                None => {
                    let at = anchor.map_or(self.keys.len(), |a| a + 1);
                    self.keys.insert(at, key.clone());
                    anchor = Some(at);
                }
            }
        }
    }

    /// `shown` (the keys the view holds) in placement order; a key never placed keeps its
    /// place after the placed ones.
    pub fn place<'a>(&self, shown: Vec<&'a String>) -> Vec<&'a String> {
        let mut placed: Vec<&'a String> = Vec::with_capacity(shown.len());
        for key in &self.keys {
            if let Some(k) = shown.iter().find(|s| **s == key) {
                placed.push(k);
            }
        }
        for k in shown {
            if !placed.contains(&k) {
                placed.push(k);
            }
        }
        placed
    }
}

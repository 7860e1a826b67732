//! ACL LOG: the most recent refusals, newest first. As Redis, a refusal
//! like one logged less than 60 seconds ago (same reason, context, object
//! and user) counts into that entry instead of adding one; the list keeps
//! `acllog-max-len` entries.

/// Refusals this close (ms) to a similar one join its entry.
const GROUP_WINDOW_MS: u64 = 60_000;

/// One entry of ACL LOG.
#[derive(Clone, Debug)]
pub struct Entry {
    pub count: u64,
    pub reason: &'static str,
    /// `toplevel`, `multi` (or `lua` once scripts exist).
    pub context: &'static str,
    /// The command, key or channel refused (`AUTH` for a failed login).
    pub object: String,
    pub username: String,
    /// Unix ms of the last refusal counted here.
    pub updated_ms: u64,
    /// CLIENT LIST's line for the client refused.
    pub client_info: String,
}

#[derive(Default)]
pub struct Log {
    /// Newest first.
    pub entries: Vec<Entry>,
}

impl Log {
    /// Counts `entry`, into a similar recent one or as a new one, and keeps
    /// at most `max_len` entries.
    pub fn add(&mut self, entry: Entry, max_len: usize) {
        let similar = self.entries.iter().position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.updated_ms.saturating_sub(e.updated_ms) < GROUP_WINDOW_MS
        });
        match similar {
            Some(at) => {
                let mut e = self.entries.remove(at);
                e.count += 1;
                e.updated_ms = entry.updated_ms;
                e.client_info = entry.client_info;
                self.entries.insert(0, e);
            }
            None => self.entries.insert(0, entry),
        }
        self.entries.truncate(max_len);
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(object: &str, at: u64) -> Entry {
        Entry {
            count: 1,
            reason: "command",
            context: "toplevel",
            object: object.into(),
            username: "u".into(),
            updated_ms: at,
            client_info: String::new(),
        }
    }

    #[test]
    fn similar_entries_group_within_a_minute() {
        let mut log = Log::default();
        log.add(entry("get", 0), 10);
        log.add(entry("set", 10), 10);
        log.add(entry("get", 20), 10);
        assert_eq!(log.entries.len(), 2);
        assert_eq!(
            (log.entries[0].object.as_str(), log.entries[0].count),
            ("get", 2)
        );
        log.add(entry("get", 100_000), 10);
        assert_eq!(log.entries.len(), 3);
        log.add(entry("x", 100_001), 2);
        assert_eq!(log.entries.len(), 2);
    }
}

//! Redis's skiplist with span counts (`t_zset.c`, after William Pugh), kept
//! in a `Vec` arena addressed by index instead of pointers.
//!
//! Elements are ordered by (score, member). Every forward link records its
//! span, the number of level-0 steps it jumps, so a descent from the header
//! that adds up the spans it crosses knows the rank of where it stops: rank
//! lookups, by-rank access and range-to-rank conversion are all O(log n).
//!
//! Ranks here are 1-based as in Redis (the header is rank 0); [`super::ZSet`]
//! turns them into the 0-based ranks commands speak.

use bytes::Bytes;

/// Enough levels for 4^32 elements with p = 1/4 (Redis's `ZSKIPLIST_MAXLEVEL`).
const MAX_LEVEL: usize = 32;

/// "No node": the end of a level, or no backward neighbour.
const NIL: u32 = u32::MAX;

/// The header node lives at index 0 of the arena, with `MAX_LEVEL` levels.
const HEAD: u32 = 0;

/// The level-0 span that marks a free arena slot (a live node's is at most
/// the list's length, which stays below `u32::MAX`).
const FREE: u32 = u32::MAX;

/// A forward link. Indices and spans are `u32` to keep links at 8 bytes: a
/// sorted set of four billion members is out of reach of one shard anyway.
#[derive(Clone, Copy, Debug)]
struct Link {
    forward: u32,
    span: u32,
}

const EMPTY_LINK: Link = Link {
    forward: NIL,
    span: 0,
};

#[derive(Clone, Debug)]
struct Node {
    member: Bytes,
    score: f64,
    backward: u32,
    /// Level 0 inline: three nodes in four have no other level, so they
    /// need no second allocation.
    level0: Link,
    /// Levels 1 and up (empty for most nodes, which allocates nothing).
    upper: Box<[Link]>,
}

impl Node {
    #[cfg(test)]
    fn height(&self) -> usize {
        1 + self.upper.len()
    }

    fn link(&self, level: usize) -> &Link {
        if level == 0 {
            &self.level0
        } else {
            &self.upper[level - 1]
        }
    }

    fn link_mut(&mut self, level: usize) -> &mut Link {
        if level == 0 {
            &mut self.level0
        } else {
            &mut self.upper[level - 1]
        }
    }

    /// Whether this node sorts before (score, member).
    fn before(&self, score: f64, member: &[u8]) -> bool {
        self.score < score || (self.score == score && self.member.as_ref() < member)
    }
}

/// Which elements a range admits, as two tests that are monotone along the
/// order: `before_start` holds for a prefix of the elements and `after_end`
/// for a suffix. Score ranges always are; lex ranges are when all scores are
/// equal, which is the case Redis defines them for.
pub trait RangeSpec {
    fn before_start(&self, score: f64, member: &[u8]) -> bool;
    fn after_end(&self, score: f64, member: &[u8]) -> bool;
}

/// Arena slots of removed nodes form a doubly linked list through the
/// slots themselves (`level0.forward` to the next free slot, `backward` to
/// the previous one, `level0.span` = [`FREE`]), so any one of them can be
/// taken out in O(1): inserts reuse the first, and [`SkipList::compact`]
/// drops free slots from the arena's end.
#[derive(Clone, Debug)]
pub struct SkipList {
    nodes: Vec<Node>,
    /// The first free slot, or NIL.
    free_head: u32,
    /// How many slots are free.
    free_len: usize,
    /// Where [`compact`](Self::compact) looks for the next free slot to
    /// move a node into: it scans upwards, so the nodes it moves go to the
    /// lowest free slots, never to ones it will drop later.
    hole_cursor: u32,
    tail: u32,
    len: usize,
    /// Levels in use (at least 1).
    level: usize,
    /// Upper-level links allocated over all live nodes (for `heap_size`).
    upper_links: usize,
    /// Random-level generator state (splitmix64). The levels do not depend on
    /// the data, so a fixed seed cannot be exploited by chosen members.
    rng: u64,
}

impl Default for SkipList {
    fn default() -> Self {
        SkipList {
            nodes: vec![Node {
                member: Bytes::new(),
                score: 0.0,
                backward: NIL,
                level0: EMPTY_LINK,
                upper: vec![EMPTY_LINK; MAX_LEVEL - 1].into_boxed_slice(),
            }],
            free_head: NIL,
            free_len: 0,
            hole_cursor: 1,
            tail: NIL,
            len: 0,
            level: 1,
            upper_links: 0,
            rng: 0x2545_f491_4f6c_dd1d,
        }
    }
}

impl SkipList {
    fn node(&self, x: u32) -> &Node {
        &self.nodes[x as usize]
    }

    fn node_mut(&mut self, x: u32) -> &mut Node {
        &mut self.nodes[x as usize]
    }

    fn forward(&self, x: u32, level: usize) -> u32 {
        self.node(x).link(level).forward
    }

    fn span(&self, x: u32, level: usize) -> u32 {
        self.node(x).link(level).span
    }

    fn link_mut(&mut self, x: u32, level: usize) -> &mut Link {
        self.node_mut(x).link_mut(level)
    }

    /// A level with Redis's distribution: each extra level with probability
    /// 1/4. Each pair of zero low bits of a random word is one more level.
    fn random_level(&mut self) -> usize {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (1 + z.trailing_zeros() as usize / 2).min(MAX_LEVEL)
    }

    fn alloc(&mut self, member: Bytes, score: f64, height: usize) -> u32 {
        self.upper_links += height - 1;
        let node = Node {
            member,
            score,
            backward: NIL,
            level0: EMPTY_LINK,
            upper: vec![EMPTY_LINK; height - 1].into_boxed_slice(),
        };
        match self.free_head {
            NIL => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
            slot => {
                self.take_free(slot);
                self.nodes[slot as usize] = node;
                slot
            }
        }
    }

    /// Returns the slot to the free list, handing back the member.
    fn release(&mut self, x: u32) -> (Bytes, f64) {
        let head = self.free_head;
        let node = self.node_mut(x);
        let member = std::mem::take(&mut node.member);
        let upper = std::mem::take(&mut node.upper);
        let score = node.score;
        node.level0 = Link {
            forward: head,
            span: FREE,
        };
        node.backward = NIL;
        if head != NIL {
            self.node_mut(head).backward = x;
        }
        self.free_head = x;
        self.free_len += 1;
        self.upper_links -= upper.len();
        (member, score)
    }

    /// Takes free slot `x` out of the free list.
    fn take_free(&mut self, x: u32) {
        debug_assert_eq!(self.node(x).level0.span, FREE);
        let (prev, next) = (self.node(x).backward, self.node(x).level0.forward);
        match prev {
            NIL => self.free_head = next,
            prev => self.node_mut(prev).level0.forward = next,
        }
        if next != NIL {
            self.node_mut(next).backward = prev;
        }
        self.free_len -= 1;
    }

    /// For each level, the last node before (score, member), and its rank.
    fn search(&self, score: f64, member: &[u8]) -> ([u32; MAX_LEVEL], [u32; MAX_LEVEL]) {
        let mut update = [HEAD; MAX_LEVEL];
        let mut rank = [0u32; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            rank[i] = if i + 1 == self.level { 0 } else { rank[i + 1] };
            loop {
                let next = self.forward(x, i);
                if next == NIL || !self.node(next).before(score, member) {
                    break;
                }
                rank[i] += self.span(x, i);
                x = next;
            }
            update[i] = x;
        }
        (update, rank)
    }

    /// Inserts an element. Requires: `member` is not in the list, `score`
    /// is not NaN.
    pub fn insert(&mut self, score: f64, member: Bytes) {
        let (mut update, mut rank) = self.search(score, &member);
        let height = self.random_level();
        if height > self.level {
            for i in self.level..height {
                rank[i] = 0;
                update[i] = HEAD;
                self.link_mut(HEAD, i).span = self.len as u32;
            }
            self.level = height;
        }
        let x = self.alloc(member, score, height);
        for i in 0..height {
            let before = *self.node(update[i]).link(i);
            let crossed = rank[0] - rank[i];
            *self.link_mut(x, i) = Link {
                forward: before.forward,
                span: before.span - crossed,
            };
            *self.link_mut(update[i], i) = Link {
                forward: x,
                span: crossed + 1,
            };
        }
        // Levels above the new node now jump over one more element.
        for (i, &u) in update.iter().enumerate().take(self.level).skip(height) {
            self.link_mut(u, i).span += 1;
        }
        self.node_mut(x).backward = if update[0] == HEAD { NIL } else { update[0] };
        match self.forward(x, 0) {
            NIL => self.tail = x,
            next => self.node_mut(next).backward = x,
        }
        self.len += 1;
    }

    /// Unlinks node `x`, given the last node before it on every level.
    fn unlink(&mut self, x: u32, update: &[u32; MAX_LEVEL]) {
        for (i, &u) in update.iter().enumerate().take(self.level) {
            if self.forward(u, i) == x {
                let gone = *self.node(x).link(i);
                let link = self.link_mut(u, i);
                link.span += gone.span;
                link.span -= 1;
                link.forward = gone.forward;
            } else {
                self.link_mut(u, i).span -= 1;
            }
        }
        let backward = self.node(x).backward;
        match self.forward(x, 0) {
            NIL => self.tail = backward,
            next => self.node_mut(next).backward = backward,
        }
        while self.level > 1 && self.forward(HEAD, self.level - 1) == NIL {
            self.level -= 1;
        }
        self.len -= 1;
    }

    /// Removes the element (score, member). Returns whether it was there.
    pub fn remove(&mut self, score: f64, member: &[u8]) -> bool {
        let (update, _) = self.search(score, member);
        let x = self.forward(update[0], 0);
        if x == NIL || self.node(x).score != score || self.node(x).member.as_ref() != member {
            return false;
        }
        self.unlink(x, &update);
        self.release(x);
        true
    }

    /// Moves `member` from score `old` to `new`. Like Redis, the node stays
    /// where it is when the new score keeps it between its neighbours.
    /// Requires: (old, member) is in the list, `new` is not NaN.
    pub fn update_score(&mut self, old: f64, member: &[u8], new: f64) {
        let (update, _) = self.search(old, member);
        let x = self.forward(update[0], 0);
        debug_assert!(x != NIL && self.node(x).member.as_ref() == member);
        let backward = self.node(x).backward;
        let next = self.forward(x, 0);
        let fits_after = backward == NIL || self.node(backward).before(new, member);
        let fits_before = next == NIL || !self.node(next).before(new, member);
        if fits_after && fits_before {
            self.node_mut(x).score = new;
            return;
        }
        self.unlink(x, &update);
        let (member, _) = self.release(x);
        self.insert(new, member);
    }

    /// The 1-based rank of (score, member), or None if it is absent.
    pub fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        let mut x = HEAD;
        let mut rank = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let next = self.forward(x, i);
                if next == NIL {
                    break;
                }
                let n = self.node(next);
                if !(n.score < score || (n.score == score && n.member.as_ref() <= member)) {
                    break;
                }
                rank += self.span(x, i) as usize;
                x = next;
            }
            if x != HEAD && self.node(x).member.as_ref() == member {
                return Some(rank);
            }
        }
        None
    }

    /// The node at 1-based `rank`, or NIL.
    fn at_rank(&self, rank: usize) -> u32 {
        let mut x = HEAD;
        let mut traversed = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let next = self.forward(x, i);
                if next == NIL || traversed + self.span(x, i) as usize > rank {
                    break;
                }
                traversed += self.span(x, i) as usize;
                x = next;
            }
            if traversed == rank {
                return x;
            }
        }
        NIL
    }

    /// Walks from the head past every element `passes` accepts (they must
    /// form a prefix of the order); returns the last node passed (HEAD if
    /// none) and its 1-based rank (0 if none).
    fn pass_while(&self, passes: impl Fn(&Node) -> bool) -> (u32, usize) {
        let mut x = HEAD;
        let mut rank = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let next = self.forward(x, i);
                if next == NIL || !passes(self.node(next)) {
                    break;
                }
                rank += self.span(x, i) as usize;
                x = next;
            }
        }
        (x, rank)
    }

    /// The 1-based rank of the first element the range admits.
    pub fn first_in_range(&self, range: &impl RangeSpec) -> Option<usize> {
        let (x, rank) = self.pass_while(|n| range.before_start(n.score, &n.member));
        let first = self.forward(x, 0);
        if first == NIL {
            return None;
        }
        let n = self.node(first);
        (!range.after_end(n.score, &n.member)).then_some(rank + 1)
    }

    /// The 1-based rank of the last element the range admits.
    pub fn last_in_range(&self, range: &impl RangeSpec) -> Option<usize> {
        let (x, rank) = self.pass_while(|n| !range.after_end(n.score, &n.member));
        if x == HEAD {
            return None;
        }
        let n = self.node(x);
        (!range.before_start(n.score, &n.member)).then_some(rank)
    }

    /// Removes the elements of 1-based ranks `start..=end` (clamped to the
    /// list), returned in ascending order.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> Vec<(Bytes, f64)> {
        let mut update = [HEAD; MAX_LEVEL];
        let mut x = HEAD;
        let mut traversed = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let next = self.forward(x, i);
                if next == NIL || traversed + self.span(x, i) as usize >= start {
                    break;
                }
                traversed += self.span(x, i) as usize;
                x = next;
            }
            update[i] = x;
        }
        let end = end.min(self.len);
        let mut removed = Vec::with_capacity(end.saturating_sub(start) + 1);
        traversed += 1;
        x = self.forward(x, 0);
        while x != NIL && traversed <= end {
            let next = self.forward(x, 0);
            self.unlink(x, &update);
            removed.push(self.release(x));
            traversed += 1;
            x = next;
        }
        removed
    }

    /// Elements from 1-based `rank` on, ascending or (with `rev`) descending.
    pub fn iter_from(&self, rank: usize, rev: bool) -> Iter<'_> {
        let at = if rank == 0 { NIL } else { self.at_rank(rank) };
        Iter {
            list: self,
            at,
            rev,
        }
    }

    /// Every element, ascending.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            list: self,
            at: self.forward(HEAD, 0),
            rev: false,
        }
    }

    /// Whether many slots sit unused, so that [`compact`](Self::compact)
    /// should give them back: more free slots than live nodes (and more
    /// than a few), as the full rebuild this replaced was triggered.
    pub fn mostly_free(&self) -> bool {
        self.free_len > 64 && self.free_len > self.len
    }

    /// Slots in the arena, free ones included (the header too).
    pub fn slots(&self) -> usize {
        self.nodes.len()
    }

    /// Free slots in the arena.
    pub fn free_slots(&self) -> usize {
        self.free_len
    }

    /// The member in arena slot `slot`, if it holds a live node.
    pub fn member_in_slot(&self, slot: usize) -> Option<&Bytes> {
        let node = self.nodes.get(slot)?;
        (slot != HEAD as usize && node.level0.span != FREE).then_some(&node.member)
    }

    /// Gives back free arena slots from the end, a bounded step at a time:
    /// a free last slot is dropped; a live last node moves into the lowest
    /// free slot (found by a scan upwards that resumes where it stopped),
    /// its predecessors found by one search, or by its backward link when
    /// it has only level 0, as three nodes in four do. Stops after `budget`
    /// units of work (a slot dropped, a slot scanned, a level-0 node moved
    /// is one; a taller node's search counts one per level of the list) or
    /// when no slot is free; then the arena's spare capacity goes too.
    /// `moved` hears of each node moved, with its member and new slot.
    /// Returns the units spent.
    pub fn compact(&mut self, budget: usize, mut moved: impl FnMut(&Bytes, usize)) -> usize {
        let mut spent = 0;
        while spent < budget && self.free_len > 0 {
            let last = (self.nodes.len() - 1) as u32;
            if self.node(last).level0.span == FREE {
                self.take_free(last);
                self.nodes.pop();
                spent += 1;
                continue;
            }
            // The last slot is live, so some free slot lies below it.
            if self.hole_cursor >= last {
                // Slots below the scan were freed since it passed them.
                self.hole_cursor = 1;
            }
            let to = self.hole_cursor;
            spent += 1;
            if self.node(to).level0.span != FREE {
                self.hole_cursor += 1;
                continue;
            }
            let node = self.node(last);
            let height = 1 + node.upper.len();
            let mut update = [HEAD; MAX_LEVEL];
            if height == 1 {
                update[0] = if node.backward == NIL {
                    HEAD
                } else {
                    node.backward
                };
                spent += 1;
            } else {
                (update, _) = self.search(node.score, &node.member);
                spent += 1 + self.level;
            }
            self.take_free(to);
            self.nodes.swap(to as usize, last as usize);
            self.nodes.pop();
            for (i, &u) in update.iter().enumerate().take(height) {
                debug_assert_eq!(self.forward(u, i), last);
                self.link_mut(u, i).forward = to;
            }
            match self.forward(to, 0) {
                NIL => self.tail = to,
                next => self.node_mut(next).backward = to,
            }
            moved(&self.node(to).member, to as usize);
        }
        // Once the free slots are gone, so goes the capacity they took,
        // beyond the slack `Vec` growth leaves anyway.
        if self.free_len == 0 && self.nodes.capacity() > 2 * self.nodes.len() + 16 {
            self.nodes
                .shrink_to(self.nodes.len() + self.nodes.len() / 4);
            spent += 1;
        }
        spent
    }

    /// A list of `pairs`, which must be sorted by (score, member) without
    /// repeated members. Builds in O(n) by appending at the tail.
    pub fn from_sorted(pairs: impl IntoIterator<Item = (Bytes, f64)>) -> SkipList {
        let mut list = SkipList::default();
        // The last node on each level so far, and its rank.
        let mut last = [HEAD; MAX_LEVEL];
        let mut last_rank = [0u32; MAX_LEVEL];
        for (member, score) in pairs {
            let rank = list.len as u32 + 1;
            let height = list.random_level();
            list.level = list.level.max(height);
            let x = list.alloc(member, score, height);
            for i in 0..height {
                list.link_mut(last[i], i).forward = x;
                list.link_mut(last[i], i).span = rank - last_rank[i];
                last[i] = x;
                last_rank[i] = rank;
            }
            list.node_mut(x).backward = list.tail;
            list.tail = x;
            list.len += 1;
        }
        // Links to the end span what remains, as inserts leave them.
        for i in 0..list.level {
            list.link_mut(last[i], i).span = list.len as u32 - last_rank[i];
        }
        list
    }

    /// Heap bytes held by the arena (members are counted by the owner).
    pub fn heap_size(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + (self.upper_links + MAX_LEVEL) * std::mem::size_of::<Link>()
    }

    /// Checks every structural invariant (tests only).
    #[cfg(test)]
    pub fn check(&self) {
        // Level 0 is sorted, backward links mirror it, the tail is its end.
        let mut prev = NIL;
        let mut x = self.forward(HEAD, 0);
        let mut rank_of = std::collections::HashMap::new();
        let mut rank = 0u32;
        while x != NIL {
            rank += 1;
            rank_of.insert(x, rank);
            assert_eq!(self.node(x).backward, prev);
            if prev != NIL {
                let (p, n) = (self.node(prev), self.node(x));
                assert!(p.before(n.score, &n.member), "out of order");
            }
            prev = x;
            x = self.forward(x, 0);
        }
        assert_eq!(self.tail, prev);
        assert_eq!(rank as usize, self.len);
        // Every link's span is the rank distance it jumps.
        for i in 0..self.level {
            let mut x = HEAD;
            loop {
                let next = self.forward(x, i);
                if next == NIL {
                    break;
                }
                let from = if x == HEAD { 0 } else { rank_of[&x] };
                assert_eq!(self.span(x, i), rank_of[&next] - from, "span at level {i}");
                assert!(self.node(next).height() > i);
                x = next;
            }
        }
        for i in self.level..MAX_LEVEL {
            assert_eq!(self.forward(HEAD, i), NIL);
        }
        assert!(self.level == 1 || self.forward(HEAD, self.level - 1) != NIL);
        // Every slot is the header, a live node or on the free list.
        let (mut free, mut prev, mut x) = (0, NIL, self.free_head);
        while x != NIL {
            assert_eq!(self.node(x).level0.span, FREE);
            assert_eq!(self.node(x).backward, prev);
            assert!(!rank_of.contains_key(&x));
            free += 1;
            prev = x;
            x = self.node(x).level0.forward;
        }
        assert_eq!(free, self.free_len);
        assert_eq!(1 + self.len + self.free_len, self.nodes.len());
    }
}

/// Walks the list from a node, one level-0 step at a time.
pub struct Iter<'a> {
    list: &'a SkipList,
    at: u32,
    rev: bool,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Bytes, f64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at == NIL {
            return None;
        }
        let node = self.list.node(self.at);
        self.at = if self.rev {
            node.backward
        } else {
            node.level0.forward
        };
        Some((&node.member, node.score))
    }
}

//! A connection's pending output: what its replies cost in memory, and how
//! they go out.
//!
//! Replies were once encoded into one `Vec<u8>` that doubled as it grew, so
//! a client that sent 200 GETs of a 1 MB value and never read held 448 MB
//! of RSS: a copy of every payload, the doubled capacity, and the freed
//! smaller buffers jemalloc had not purged yet. Here encoded bytes fill
//! fixed blocks of [`BLOCK`] bytes, never reallocated, and a bulk payload of
//! [`SHARE_MIN`] bytes or more is kept as the value's own `Bytes` (a
//! reference count, no copy), as Redis keeps its reply list of 16 KiB
//! blocks. [`Output::mem`] is what the queue holds, which CLIENT LIST
//! shows as `omem` and `client-output-buffer-limit` is checked against.

use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};

use bytes::Bytes;

use crate::resp::Sink;

/// Size of a block of encoded replies (Redis's PROTO_REPLY_CHUNK_BYTES).
pub const BLOCK: usize = 16 * 1024;
/// Bulk payloads this large or larger are queued by reference, not copied.
/// Below it a copy into the current block is cheaper than one more block
/// to write and count.
pub const SHARE_MIN: usize = 4 * 1024;
/// First size of a block that starts small (see `Output::tail`).
const SMALL: usize = 256;
/// Most blocks handed to one `writev`.
const MAX_IOV: usize = 64;

enum Block {
    /// Encoded bytes, filled up to the capacity it was made with.
    Copied(Vec<u8>),
    /// A payload held by reference.
    Shared(Bytes),
}

impl Block {
    fn bytes(&self) -> &[u8] {
        match self {
            Block::Copied(v) => v,
            Block::Shared(b) => b,
        }
    }

    /// Memory this block holds.
    fn mem(&self) -> usize {
        match self {
            Block::Copied(v) => v.capacity(),
            Block::Shared(b) => b.len(),
        }
    }
}

/// The replies a connection has not written yet, in order.
#[derive(Default)]
pub struct Output {
    blocks: VecDeque<Block>,
    /// Bytes of the front block already written.
    head: usize,
    /// Bytes not written yet.
    len: usize,
    /// Memory the queued blocks hold (capacities and shared payloads).
    mem: usize,
    /// An emptied block kept for the next replies, so a connection that
    /// keeps up allocates nothing per reply. Not counted in `mem`: it holds
    /// no output (Redis's per-client 16 KiB buffer is not in `omem` either).
    spare: Option<Vec<u8>>,
}

impl Output {
    /// Bytes not written yet.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Memory held by the unwritten output.
    pub fn mem(&self) -> usize {
        self.mem
    }

    /// Blocks queued (CLIENT LIST `oll`).
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Unwritten bytes of the block being written (CLIENT LIST `obl`).
    pub fn front_len(&self) -> usize {
        self.blocks
            .front()
            .map_or(0, |b| b.bytes().len() - self.head)
    }

    /// Memory of the kept empty block, if any (part of CLIENT LIST `tot-mem`).
    pub fn spare_mem(&self) -> usize {
        self.spare.as_ref().map_or(0, Vec::capacity)
    }

    /// A copy block with room for at least one more byte: the last one, or
    /// a new one. After a full block comes a full-size one (a stream of
    /// small replies); the first block and one after a shared payload start
    /// small and double up to [`BLOCK`], so the few bytes between large
    /// payloads (a CRLF and the next header) do not each take 16 KiB.
    fn tail(&mut self, want: usize) -> &mut Vec<u8> {
        let grow = match self.blocks.back() {
            Some(Block::Copied(v)) if v.len() < v.capacity() => None,
            Some(Block::Copied(v)) if v.capacity() < BLOCK => {
                Some((v.capacity() * 2).max(v.len() + want).min(BLOCK))
            }
            _ => {
                let after_full = matches!(self.blocks.back(), Some(Block::Copied(_)));
                let block = match self.spare.take() {
                    Some(spare) if after_full || self.blocks.is_empty() => spare,
                    spare => {
                        self.spare = spare;
                        let cap = if after_full {
                            BLOCK
                        } else {
                            want.clamp(SMALL, BLOCK)
                        };
                        Vec::with_capacity(cap)
                    }
                };
                self.mem += block.capacity();
                self.blocks.push_back(Block::Copied(block));
                None
            }
        };
        let Some(Block::Copied(v)) = self.blocks.back_mut() else {
            unreachable!("a copy block was just ensured");
        };
        if let Some(cap) = grow {
            let before = v.capacity();
            v.reserve_exact(cap - v.len());
            self.mem += v.capacity() - before;
        }
        v
    }

    /// Writes as much as `w` takes. Returns the bytes written and whether
    /// everything went out.
    pub fn write_to(&mut self, w: &mut impl Write) -> io::Result<(usize, bool)> {
        let mut written = 0;
        while self.len > 0 {
            let result = if self.blocks.len() == 1 {
                w.write(&self.blocks[0].bytes()[self.head..])
            } else {
                let mut slices = [IoSlice::new(&[]); MAX_IOV];
                let mut n = 0;
                for (i, block) in self.blocks.iter().take(MAX_IOV).enumerate() {
                    let from = if i == 0 { self.head } else { 0 };
                    slices[n] = IoSlice::new(&block.bytes()[from..]);
                    n += 1;
                }
                w.write_vectored(&slices[..n])
            };
            match result {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    written += n;
                    self.consume(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((written, false)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok((written, true))
    }

    /// Drops `n` written bytes off the front.
    fn consume(&mut self, mut n: usize) {
        self.len -= n;
        while n > 0 {
            let front_left = self.front_len();
            if n < front_left {
                self.head += n;
                return;
            }
            n -= front_left;
            self.head = 0;
            let block = self.blocks.pop_front().expect("written bytes were queued");
            self.mem -= block.mem();
            if let Block::Copied(mut v) = block {
                if v.capacity() == BLOCK && self.spare.is_none() {
                    v.clear();
                    self.spare = Some(v);
                }
            }
        }
    }
}

impl Sink for Output {
    fn put(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len();
        while !bytes.is_empty() {
            let tail = self.tail(bytes.len());
            let n = (tail.capacity() - tail.len()).min(bytes.len());
            tail.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
    }

    fn payload(&mut self, data: &Bytes) {
        if data.len() < SHARE_MIN {
            self.put(data);
            return;
        }
        self.len += data.len();
        self.mem += data.len();
        self.blocks.push_back(Block::Shared(data.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::{encode, Frame, Protocol};

    /// Takes at most `cap` bytes per write, `per_call` writes, then WouldBlock.
    struct Peer {
        got: Vec<u8>,
        cap: usize,
        per_call: usize,
    }

    impl Write for Peer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.per_call == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            self.per_call -= 1;
            let n = buf.len().min(self.cap);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn frames() -> Vec<Frame> {
        vec![
            Frame::OK,
            Frame::Bulk(Bytes::from(vec![b'a'; 100_000])),
            Frame::Integer(-7),
            Frame::Array(vec![Frame::bulk("x"); 5000]),
            Frame::Bulk(Bytes::from(vec![b'b'; SHARE_MIN])),
            Frame::error("ERR e"),
        ]
    }

    #[test]
    fn bytes_go_out_as_a_plain_encoding_would_write_them() {
        for cap in [1, 7, 4096, 1 << 20] {
            let mut out = Output::default();
            let mut want = Vec::new();
            for f in frames() {
                encode(&f, Protocol::Resp2, &mut out);
                encode(&f, Protocol::Resp2, &mut want);
            }
            assert_eq!(out.len(), want.len());
            let mut peer = Peer {
                got: Vec::new(),
                cap,
                per_call: 0,
            };
            loop {
                peer.per_call = 3;
                let (_, all) = out.write_to(&mut peer).unwrap();
                if all {
                    break;
                }
            }
            assert_eq!(peer.got, want, "cap {cap}");
            assert_eq!((out.len(), out.mem(), out.blocks()), (0, 0, 0));
            assert!(out.spare_mem() <= BLOCK, "at most one block kept for reuse");
        }
    }

    #[test]
    fn large_payloads_are_shared_and_memory_is_what_the_blocks_hold() {
        let value = Bytes::from(vec![b'v'; 1 << 20]);
        let mut out = Output::default();
        for _ in 0..10 {
            encode(&Frame::Bulk(value.clone()), Protocol::Resp2, &mut out);
        }
        // Each reply: its header and CRLF in copy blocks, the payload by reference.
        assert_eq!(out.len(), 10 * ((1 << 20) + "$1048576\r\n\r\n".len()));
        assert!(out.mem() >= 10 << 20, "the payloads count: {}", out.mem());
        // The bytes between payloads take small blocks, not 16 KiB each.
        assert!(out.mem() <= (10 << 20) + 11 * SMALL, "{}", out.mem());
        // Small replies pack into blocks, none reallocated.
        let mut small = Output::default();
        for _ in 0..100_000 {
            encode(&Frame::Integer(12345), Protocol::Resp2, &mut small);
        }
        assert_eq!(small.len(), 100_000 * 8);
        assert_eq!(small.mem(), small.len().div_ceil(BLOCK) * BLOCK);
        assert_eq!(small.front_len(), BLOCK);
    }
}

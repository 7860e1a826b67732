//! One client connection: its buffers, parser, session and the queue of reply
//! slots that keeps pipelined replies in request order while some of them are
//! still being computed on other shards.

use std::collections::VecDeque;
use std::io::{self, Read};

use bytes::BytesMut;
use mio::net::TcpStream;

use super::Output;
use crate::cmd::{CommandSpec, Session};
use crate::exec::{Out, Then};
use crate::resp::{encode, Frame, Parser};
use crate::util::stamp::Stamp;

/// A reply position in request order.
pub enum Slot {
    Ready(Frame),
    /// Waiting for `remaining` shard outputs; `then` turns them into the reply.
    Waiting {
        outs: Vec<Option<Out>>,
        remaining: usize,
        then: Option<Then>,
        /// For command statistics: which command and when it was dispatched.
        cmd: &'static CommandSpec,
        started: Stamp,
        /// For the slow log: the command as sent (empty while the slow log
        /// is off), and for a command that waited (BLPOP) the time of its
        /// own work, which the wait does not count in.
        argv: Vec<bytes::Bytes>,
        own_us: Option<u64>,
        /// Its reply is not sent (CLIENT REPLY OFF or SKIP when it came).
        silent: bool,
    },
}

/// Reads once from `source` into `rbuf`, at most `scratch.len()` bytes: a
/// client that sends a lot gets one buffer's worth of commands per pass of
/// the loop, so it cannot hold the others up for long (Redis reads 16 KiB
/// per event the same way).
pub fn read_once(
    source: &mut impl Read,
    rbuf: &mut BytesMut,
    scratch: &mut [u8],
) -> io::Result<Received> {
    loop {
        return match source.read(scratch) {
            Ok(0) => Ok(Received {
                bytes: 0,
                open: false,
                drained: true,
            }),
            Ok(n) => {
                rbuf.extend_from_slice(&scratch[..n]);
                Ok(Received {
                    bytes: n,
                    open: true,
                    // A short read emptied the socket; a full one may not have.
                    drained: n < scratch.len(),
                })
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Received {
                bytes: 0,
                open: true,
                drained: true,
            }),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
    }
}

/// What one read from a client's socket brought.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub bytes: usize,
    /// False once the peer closed its side.
    pub open: bool,
    /// The socket has nothing more for now. When false it may hold more,
    /// and no new readiness event will say so (edge-triggered polling).
    pub drained: bool,
}

/// A read buffer's first size (Redis's PROTO_IOBUF_LEN).
pub const READ_BUFFER: usize = 16 * 1024;

pub struct Conn {
    pub stream: TcpStream,
    /// A client of `tls-port`: its bytes pass through rustls (`net::tls`).
    pub tls: Option<Box<rustls::ServerConnection>>,
    pub session: Session,
    pub rbuf: BytesMut,
    /// The most `rbuf` held since the shard's last cron, and whether it
    /// grew past its first size since it was last given back
    /// (`Worker::cron` trims it).
    pub rbuf_peak: usize,
    pub rbuf_grown: bool,
    /// The size of `rbuf`'s allocation as last seen (its query buffer's
    /// size to CLIENT LIST: `qbuf` + `qbuf-free`). `rbuf.capacity()`
    /// alone undercounts it: a parsed command split off the front leaves
    /// its bytes out of the capacity until a read takes the room back.
    rbuf_size: usize,
    /// Replies encoded and not yet written.
    pub out: Output,
    pub parser: Parser,
    slots: VecDeque<Slot>,
    /// Sequence number of `slots[0]`.
    base_seq: u64,
    /// Close once everything queued is written (QUIT, protocol error, kill).
    pub closing: bool,
    /// Some while the shard loop has this connection's input queued for
    /// its next pass (`Worker::unread`): whether the peer closed its side.
    /// Kept here so an event for it is matched in O(1), not by a search of
    /// the queue per event.
    pub deferred_input: Option<bool>,
    /// Its last turn ended with commands left in `rbuf` (the shard loop
    /// runs one connection's commands for a bounded time per pass).
    pub commands_left: bool,
    /// A multi-step job is in flight: later commands wait so this client
    /// still sees its own writes in order.
    pub barrier: Option<u64>,
    /// Whether WRITABLE interest is registered with the poll.
    pub wants_write: bool,
    /// The transaction holding key locks for this client's current job.
    pub tx: Option<crate::exec::TxId>,
    /// Since when (Unix seconds) unsent output has been over the soft limit
    /// (`soft_limit_since` is reset once it drops below).
    pub soft_limit_since: Option<u64>,
    /// Over its `client-output-buffer-limit`: no more replies are queued
    /// and nothing more is read; the shard closes it at the end of the
    /// pass (Redis's CLIENT_CLOSE_ASAP).
    pub close_asap: bool,
    /// What this client counted for in its shard's `clients_mem` when last
    /// accounted (the shard loop's `flush_dirty`).
    pub accounted_mem: usize,
    /// Its share of the shared client figures as last published
    /// (`exec::client_evict`, `maxmemory-clients`).
    pub share: crate::exec::client_evict::Share,
    /// A command read while this shard's script was busy that runs once
    /// it is over (`cmd::busy`): the next to run, before `rbuf`'s.
    pub held: Option<Vec<bytes::Bytes>>,
    /// Replies are not sent, pushes are (CLIENT REPLY OFF, or SKIP for the
    /// command running): set by the shard loop around each command.
    pub silent: bool,
    /// A command held back by CLIENT PAUSE: it runs, and the input after
    /// it is read, once the pause is over.
    pub postponed: Option<Vec<bytes::Bytes>>,
    /// Bytes of the command running now, still query buffer as Redis
    /// counts it (CLIENT LIST `qbuf` while the command runs).
    pub running_len: usize,
    /// A command waiting for other shards to evict what they owe first, so
    /// that invalidations of evicted keys reach a tracking client before
    /// the reply (`shard::worker::tracking`).
    pub evict_wait: Option<Vec<bytes::Bytes>>,
    /// Leaving the loop (a replica): once its replies are written, the
    /// socket goes here (`exec::Action::Handoff`); nothing more is parsed.
    pub handoff: Option<crate::exec::Handoff>,
}

impl Conn {
    pub fn new(stream: TcpStream, session: Session, parser: Parser) -> Conn {
        Conn {
            stream,
            tls: None,
            session,
            rbuf: BytesMut::with_capacity(READ_BUFFER),
            rbuf_peak: 0,
            rbuf_grown: false,
            rbuf_size: READ_BUFFER,
            out: Output::default(),
            parser,
            slots: VecDeque::new(),
            base_seq: 0,
            closing: false,
            deferred_input: None,
            commands_left: false,
            barrier: None,
            wants_write: false,
            tx: None,
            soft_limit_since: None,
            close_asap: false,
            accounted_mem: 0,
            share: Default::default(),
            held: None,
            silent: false,
            postponed: None,
            running_len: 0,
            evict_wait: None,
            handoff: None,
        }
    }

    /// Queues a finished reply (written straight out when nothing is pending).
    pub fn push_reply(&mut self, frame: Frame) {
        if self.close_asap || (self.silent && !frame.is_push()) {
            return;
        }
        if self.slots.is_empty() {
            encode(&frame, self.session.proto, &mut self.out);
        } else {
            self.slots.push_back(Slot::Ready(frame));
        }
    }

    /// Reserves a slot for a job with `parts` outputs; returns its sequence number.
    pub fn push_waiting(
        &mut self,
        parts: usize,
        then: Then,
        cmd: &'static CommandSpec,
        started: Stamp,
        argv: Vec<bytes::Bytes>,
    ) -> u64 {
        let seq = self.base_seq + self.slots.len() as u64;
        self.slots.push_back(Slot::Waiting {
            outs: (0..parts).map(|_| None).collect(),
            remaining: parts,
            then: Some(then),
            cmd,
            started,
            argv,
            own_us: None,
            silent: self.silent,
        });
        seq
    }

    /// Sets the time a waiting command's slow-log entry reports (its own
    /// work, before it started to wait).
    pub fn set_own_us(&mut self, seq: u64, us: u64) {
        if let Some(Slot::Waiting { own_us, .. }) = self.slot_mut(seq) {
            *own_us = Some(us);
        }
    }

    /// Takes a waiting slot's argv and own time for the slow log.
    pub fn take_slow(&mut self, seq: u64) -> Option<(Vec<bytes::Bytes>, Option<u64>)> {
        match self.slot_mut(seq) {
            Some(Slot::Waiting { argv, own_us, .. }) => Some((std::mem::take(argv), *own_us)),
            _ => None,
        }
    }

    /// Re-arms a slot for the next step of a multi-step job.
    pub fn rearm(&mut self, seq: u64, parts: usize, then: Then) {
        if let Some(Slot::Waiting {
            outs,
            remaining,
            then: t,
            ..
        }) = self.slot_mut(seq)
        {
            *outs = (0..parts).map(|_| None).collect();
            *remaining = parts;
            *t = Some(then);
        }
    }

    fn slot_mut(&mut self, seq: u64) -> Option<&mut Slot> {
        let index = seq.checked_sub(self.base_seq)?;
        self.slots.get_mut(index as usize)
    }

    /// Stores one output. When it was the last one, hands back the
    /// continuation and all outputs (in op order) for the caller to run.
    pub fn fill(
        &mut self,
        seq: u64,
        part: usize,
        out: Out,
    ) -> Option<(Then, Vec<Out>, &'static CommandSpec, Stamp)> {
        let Some(Slot::Waiting {
            outs,
            remaining,
            then,
            cmd,
            started,
            ..
        }) = self.slot_mut(seq)
        else {
            return None;
        };
        if part >= outs.len() || outs[part].is_some() {
            return None;
        }
        outs[part] = Some(out);
        *remaining -= 1;
        if *remaining > 0 {
            return None;
        }
        let outs = std::mem::take(outs)
            .into_iter()
            .map(|o| o.expect("all parts filled"))
            .collect();
        Some((then.take()?, outs, *cmd, *started))
    }

    /// Outputs a waiting slot with no parts needs (a job with no ops).
    pub fn take_if_complete(
        &mut self,
        seq: u64,
    ) -> Option<(Then, Vec<Out>, &'static CommandSpec, Stamp)> {
        match self.slot_mut(seq) {
            Some(Slot::Waiting {
                remaining: 0,
                then,
                cmd,
                started,
                ..
            }) => Some((then.take()?, Vec::new(), *cmd, *started)),
            _ => None,
        }
    }

    /// Sets the reply of a slot.
    pub fn resolve(&mut self, seq: u64, frame: Frame) {
        if let Some(slot) = self.slot_mut(seq) {
            let silent = matches!(slot, Slot::Waiting { silent: true, .. });
            *slot = Slot::Ready(if silent && !frame.is_push() {
                Frame::Sequence(Vec::new()) // written as nothing
            } else {
                frame
            });
        }
        self.drain_ready();
    }

    /// Encodes the replies at the front of the queue that are ready.
    pub fn drain_ready(&mut self) {
        while let Some(Slot::Ready(_)) = self.slots.front() {
            let Some(Slot::Ready(frame)) = self.slots.pop_front() else {
                unreachable!()
            };
            if !self.close_asap {
                encode(&frame, self.session.proto, &mut self.out);
            }
            self.base_seq += 1;
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Notes how much `rbuf` holds, for [`Conn::trim_read_buffer`], and
    /// how big its allocation is, after a read (a compare each: nothing
    /// here allocates). True when this read grew it past its first size:
    /// the shard then looks at it more often than at its cron.
    pub fn note_read_buffer(&mut self) -> bool {
        let held = self.rbuf.len();
        self.rbuf_peak = self.rbuf_peak.max(held);
        self.rbuf_size = self.rbuf_size.max(self.rbuf.capacity());
        let grew = held > READ_BUFFER && !self.rbuf_grown;
        self.rbuf_grown |= grew;
        grew
    }

    /// Whether the read buffer grew past its first size and was not
    /// trimmed since.
    pub fn read_buffer_grown(&self) -> bool {
        self.rbuf_grown
    }

    /// The read buffer's allocation, bytes: what CLIENT LIST shows as
    /// `qbuf` + `qbuf-free` and counts in `tot-mem`. When a read needed a
    /// new allocation while arguments still held the old one, this is the
    /// larger of the two until the next trim.
    pub fn read_buffer_size(&self) -> usize {
        self.rbuf_size.max(self.rbuf.capacity())
    }

    /// From the shard's cron: gives an empty read buffer back while the
    /// client is idle (`idle`: 2 s, as Redis frees an idle client's query
    /// buffer), or starts it afresh at its first size once it had grown
    /// for a large command and held little since the last cron. A client
    /// that sent one large command would otherwise keep the buffer's peak,
    /// megabytes, for as long as it stays connected.
    pub fn trim_read_buffer(&mut self, idle: bool) {
        let peak = std::mem::take(&mut self.rbuf_peak);
        if !self.rbuf.is_empty() {
            return;
        }
        if idle {
            self.rbuf = BytesMut::new();
            self.rbuf_grown = false;
            self.rbuf_size = 0;
        } else if self.rbuf_grown && peak <= READ_BUFFER {
            self.rbuf = BytesMut::with_capacity(READ_BUFFER);
            self.rbuf_grown = false;
            self.rbuf_size = READ_BUFFER;
        }
    }

    /// Reads once into `rbuf` (see [`read_once`]).
    pub fn fill_read_buffer(&mut self, scratch: &mut [u8]) -> io::Result<Received> {
        // A buffer given back while idle starts again at its first size
        // (Redis's PROTO_IOBUF_LEN), not at the size of the first read,
        // which would grow it a read at a time.
        if self.rbuf.capacity() == 0 {
            self.rbuf.reserve(READ_BUFFER);
        }
        match &mut self.tls {
            Some(tls) => super::tls::read_once(&mut self.stream, tls, &mut self.rbuf, scratch),
            None => read_once(&mut self.stream, &mut self.rbuf, scratch),
        }
    }

    /// Writes as much of the output as the socket takes. Returns bytes
    /// written and whether everything went out.
    pub fn flush(&mut self) -> io::Result<(usize, bool)> {
        match &mut self.tls {
            Some(tls) => super::tls::flush(&mut self.stream, tls, &mut self.out),
            None => self.out.write_to(&mut self.stream),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket with `pending` bytes waiting, then WouldBlock or EOF.
    struct Socket {
        pending: usize,
        closed: bool,
    }

    impl Read for Socket {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.pending == 0 {
                return if self.closed {
                    Ok(0)
                } else {
                    Err(io::ErrorKind::WouldBlock.into())
                };
            }
            let n = buf.len().min(self.pending);
            buf[..n].fill(b'x');
            self.pending -= n;
            Ok(n)
        }
    }

    #[test]
    fn one_read_per_call_and_whether_more_may_wait() {
        let mut socket = Socket {
            pending: 100_000,
            closed: false,
        };
        let mut rbuf = BytesMut::new();
        let mut scratch = vec![0; 64 * 1024];
        let got = |bytes, open, drained| Received {
            bytes,
            open,
            drained,
        };
        let first = read_once(&mut socket, &mut rbuf, &mut scratch).unwrap();
        assert_eq!(
            first,
            got(65_536, true, false),
            "a full read: more may wait"
        );
        let second = read_once(&mut socket, &mut rbuf, &mut scratch).unwrap();
        assert_eq!(
            second,
            got(100_000 - 65_536, true, true),
            "a short read drained it"
        );
        assert_eq!(rbuf.len(), 100_000);
        let idle = read_once(&mut socket, &mut rbuf, &mut scratch).unwrap();
        assert_eq!(idle, got(0, true, true));
        socket.closed = true;
        let end = read_once(&mut socket, &mut rbuf, &mut scratch).unwrap();
        assert_eq!(end, got(0, false, true));
    }
}

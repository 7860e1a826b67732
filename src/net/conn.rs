//! One client connection: its buffers, parser, session and the queue of reply
//! slots that keeps pipelined replies in request order while some of them are
//! still being computed on other shards.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::time::Instant;

use bytes::BytesMut;
use mio::net::TcpStream;

use crate::cmd::Session;
use crate::resp::{encode, Frame, Parser};
use crate::shard::{Out, Then};

/// A reply position in request order.
pub enum Slot {
    Ready(Frame),
    /// Waiting for `remaining` shard outputs; `then` turns them into the reply.
    Waiting {
        outs: Vec<Option<Out>>,
        remaining: usize,
        then: Option<Then>,
        /// For command statistics: which command and when it was dispatched.
        cmd: &'static str,
        started: Instant,
    },
}

pub struct Conn {
    pub stream: TcpStream,
    pub session: Session,
    pub rbuf: BytesMut,
    pub wbuf: Vec<u8>,
    /// Bytes of `wbuf` already written to the socket.
    wpos: usize,
    pub parser: Parser,
    slots: VecDeque<Slot>,
    /// Sequence number of `slots[0]`.
    base_seq: u64,
    /// Close once everything queued is written (QUIT, protocol error, kill).
    pub closing: bool,
    /// A multi-step job is in flight: later commands wait so this client
    /// still sees its own writes in order.
    pub barrier: Option<u64>,
    /// Whether WRITABLE interest is registered with the poll.
    pub wants_write: bool,
    /// The transaction holding key locks for this client's current job.
    pub tx: Option<crate::shard::TxId>,
    /// Since when (Unix seconds) unsent output has been over the soft limit
    /// (`soft_limit_since` is reset once it drops below).
    pub soft_limit_since: Option<u64>,
}

impl Conn {
    pub fn new(stream: TcpStream, session: Session, parser: Parser) -> Conn {
        Conn {
            stream,
            session,
            rbuf: BytesMut::with_capacity(16 * 1024),
            wbuf: Vec::with_capacity(16 * 1024),
            wpos: 0,
            parser,
            slots: VecDeque::new(),
            base_seq: 0,
            closing: false,
            barrier: None,
            wants_write: false,
            tx: None,
            soft_limit_since: None,
        }
    }

    /// Queues a finished reply (written straight out when nothing is pending).
    pub fn push_reply(&mut self, frame: Frame) {
        if self.slots.is_empty() {
            encode(&frame, self.session.proto, &mut self.wbuf);
        } else {
            self.slots.push_back(Slot::Ready(frame));
        }
    }

    /// Reserves a slot for a job with `parts` outputs; returns its sequence number.
    pub fn push_waiting(
        &mut self,
        parts: usize,
        then: Then,
        cmd: &'static str,
        started: Instant,
    ) -> u64 {
        let seq = self.base_seq + self.slots.len() as u64;
        self.slots.push_back(Slot::Waiting {
            outs: (0..parts).map(|_| None).collect(),
            remaining: parts,
            then: Some(then),
            cmd,
            started,
        });
        seq
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
    ) -> Option<(Then, Vec<Out>, &'static str, Instant)> {
        let Some(Slot::Waiting {
            outs,
            remaining,
            then,
            cmd,
            started,
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
        Some((then.take()?, outs, cmd, *started))
    }

    /// Outputs a waiting slot with no parts needs (a job with no ops).
    pub fn take_if_complete(
        &mut self,
        seq: u64,
    ) -> Option<(Then, Vec<Out>, &'static str, Instant)> {
        match self.slot_mut(seq) {
            Some(Slot::Waiting {
                remaining: 0,
                then,
                cmd,
                started,
                ..
            }) => Some((then.take()?, Vec::new(), cmd, *started)),
            _ => None,
        }
    }

    /// Sets the reply of a slot.
    pub fn resolve(&mut self, seq: u64, frame: Frame) {
        if let Some(slot) = self.slot_mut(seq) {
            *slot = Slot::Ready(frame);
        }
        self.drain_ready();
    }

    /// Encodes the replies at the front of the queue that are ready.
    pub fn drain_ready(&mut self) {
        while let Some(Slot::Ready(_)) = self.slots.front() {
            let Some(Slot::Ready(frame)) = self.slots.pop_front() else {
                unreachable!()
            };
            encode(&frame, self.session.proto, &mut self.wbuf);
            self.base_seq += 1;
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Reads everything available into `rbuf`. Returns false at end of stream.
    pub fn fill_read_buffer(&mut self, scratch: &mut [u8]) -> io::Result<(bool, usize)> {
        let mut total = 0;
        loop {
            match self.stream.read(scratch) {
                Ok(0) => return Ok((false, total)),
                Ok(n) => {
                    self.rbuf.extend_from_slice(&scratch[..n]);
                    total += n;
                    if n < scratch.len() {
                        return Ok((true, total));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((true, total)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes as much of `wbuf` as the socket takes. Returns bytes written and
    /// whether everything went out.
    pub fn flush(&mut self) -> io::Result<(usize, bool)> {
        let mut written = 0;
        while self.wpos < self.wbuf.len() {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.wpos += n;
                    written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((written, false)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.wbuf.clear();
        self.wpos = 0;
        // Give back memory after a huge reply instead of keeping it per client.
        if self.wbuf.capacity() > 1024 * 1024 {
            self.wbuf.shrink_to(16 * 1024);
        }
        Ok((written, true))
    }

    pub fn output_len(&self) -> usize {
        self.wbuf.len() - self.wpos
    }
}

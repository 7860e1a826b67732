//! TLS on `tls-port`, with rustls over the same non-blocking sockets and
//! the same shard loops as plain connections: a TLS connection is a plain
//! one whose bytes pass through a `rustls::ServerConnection` on their way
//! in and out ([`read_once`], [`flush`]). No thread, no runtime: rustls is
//! a state machine fed by the shard's reads and drained by its writes.
//!
//! The set-up a connection starts from is `config::tls`'s, built from the
//! `tls-*` parameters at start and by CONFIG SET.

use std::io::{self, Read, Write};

use bytes::BytesMut;
use rustls::ServerConnection;

use super::conn::Received;
use super::Output;

/// One read from the socket into rustls, then the plaintext it yields
/// into `rbuf` and whatever the handshake must answer back out. The same
/// contract as `conn::read_once`: `drained` once the socket said
/// WouldBlock, `open` false once the peer closed (a TLS close_notify or
/// the TCP end). A protocol error (a bad certificate, garbage) is an
/// error: rustls's alert is sent first, then the shard closes the client.
pub fn read_once(
    stream: &mut (impl Read + Write),
    tls: &mut ServerConnection,
    rbuf: &mut BytesMut,
    scratch: &mut [u8],
) -> io::Result<Received> {
    let mut received = Received {
        bytes: 0,
        open: true,
        drained: false,
    };
    loop {
        match tls.read_tls(stream) {
            Ok(0) => {
                received.open = false;
                received.drained = true;
            }
            Ok(n) => received.bytes = n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => received.drained = true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        break;
    }
    let state = match tls.process_new_packets() {
        Ok(state) => state,
        Err(e) => {
            let _ = send_records(stream, tls);
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
    };
    let mut plain = state.plaintext_bytes_to_read();
    let peer_closed = state.peer_has_closed();
    while plain > 0 {
        let n = tls.reader().read(scratch)?;
        if n == 0 {
            break;
        }
        rbuf.extend_from_slice(&scratch[..n]);
        plain -= n.min(plain);
    }
    if peer_closed {
        received.open = false;
    }
    send_records(stream, tls)?;
    Ok(received)
}

/// Writes what rustls has ready for the socket; false if the socket is
/// full (the rest goes out on the next writable event).
fn send_records(stream: &mut impl Write, tls: &mut ServerConnection) -> io::Result<(usize, bool)> {
    let mut written = 0;
    while tls.wants_write() {
        match tls.write_tls(stream) {
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((written, false)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok((written, true))
}

/// rustls's plaintext side as a `Write` for [`Output::write_to`]: it takes
/// plaintext up to its buffer limit, and a full buffer reads as
/// WouldBlock, as a full socket does.
struct Plaintext<'a>(&'a mut ServerConnection);

impl Write for Plaintext<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.writer().write(buf)? {
            0 if !buf.is_empty() => Err(io::ErrorKind::WouldBlock.into()),
            n => Ok(n),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Moves the connection's output through rustls onto the socket, as much
/// as the socket takes: bytes written to the socket, and whether all of
/// the output went out.
pub fn flush(
    stream: &mut impl Write,
    tls: &mut ServerConnection,
    out: &mut Output,
) -> io::Result<(usize, bool)> {
    let mut written = 0;
    loop {
        let (_, all_taken) = out.write_to(&mut Plaintext(tls))?;
        let (n, all_sent) = send_records(stream, tls)?;
        written += n;
        if !all_sent {
            return Ok((written, false));
        }
        if all_taken {
            return Ok((written, true));
        }
    }
}

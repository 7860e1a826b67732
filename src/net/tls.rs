//! TLS on `tls-port`, with rustls over the same non-blocking sockets and
//! the same shard loops as plain connections: a TLS connection is a plain
//! one whose bytes pass through a `rustls::ServerConnection` on their way
//! in and out ([`read_once`], [`flush`]). No thread, no runtime: rustls is
//! a state machine fed by the shard's reads and drained by its writes.
//!
//! [`server_config`] builds the set-up once at start from `tls-cert-file`,
//! `tls-key-file` and, for client certificates (`tls-auth-clients`),
//! `tls-ca-cert-file` / `tls-ca-cert-dir`; a file that is missing or holds
//! no usable PEM stops start-up with a message naming it, as Redis does.

use std::io::{self, Read, Write};
use std::sync::Arc;

use bytes::BytesMut;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};

use super::conn::Received;
use super::Output;
use crate::config::tls::TlsFiles;

/// The server's TLS set-up from the `tls-*` parameters.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, String> {
    if files.cert_file.is_empty() || files.key_file.is_empty() {
        return Err(
            "Failed to configure TLS: tls-port needs tls-cert-file and tls-key-file".into(),
        );
    }
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert_file)
        .and_then(|certs| certs.collect())
        .map_err(|e| format!("Failed to load certificate: {}: {e}", files.cert_file))?;
    if certs.is_empty() {
        return Err(format!(
            "Failed to load certificate: {}: no certificate in it",
            files.cert_file
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key_file)
        .map_err(|e| format!("Failed to load private key: {}: {e}", files.key_file))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("Failed to configure TLS: {e}"))?;
    let builder = if files.auth_clients == 0 {
        builder.with_no_client_auth()
    } else {
        let roots = ca_roots(files)?;
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
        let verifier = if files.auth_clients == 2 {
            verifier.allow_unauthenticated()
        } else {
            verifier
        };
        builder.with_client_cert_verifier(
            verifier
                .build()
                .map_err(|e| format!("Failed to configure TLS: client certificates: {e}"))?,
        )
    };
    let config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Failed to configure TLS: {}: {e}", files.cert_file))?;
    Ok(Arc::new(config))
}

/// The CAs that sign client certificates: `tls-ca-cert-file`, and every
/// PEM file in `tls-ca-cert-dir`. Redis refuses to start without one while
/// clients must show certificates; so does this.
fn ca_roots(files: &TlsFiles) -> Result<RootCertStore, String> {
    let mut paths = Vec::new();
    if !files.ca_cert_file.is_empty() {
        paths.push(std::path::PathBuf::from(&files.ca_cert_file));
    }
    if !files.ca_cert_dir.is_empty() {
        let dir = std::fs::read_dir(&files.ca_cert_dir)
            .map_err(|e| format!("Failed to load CA certificates: {}: {e}", files.ca_cert_dir))?;
        paths.extend(
            dir.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file()),
        );
    }
    if paths.is_empty() {
        return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!".into());
    }
    let mut roots = RootCertStore::empty();
    for path in &paths {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("Failed to load CA certificates: {}: {e}", path.display()))?;
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| format!("Failed to load CA certificates: {}: {e}", path.display()))?;
        }
    }
    if roots.is_empty() {
        return Err(
            "Failed to load CA certificates: no certificate in tls-ca-cert-file or tls-ca-cert-dir"
                .into(),
        );
    }
    Ok(roots)
}

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

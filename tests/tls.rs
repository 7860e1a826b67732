//! TLS on `tls-port`: a CA, a server certificate and a client certificate
//! made here (rcgen), ember serving both its plain port and its TLS port,
//! clients speaking RESP through rustls and through redis-cli --tls.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// The PEM files of one test: a CA, the server's pair, a client's pair.
struct Certs {
    dir: PathBuf,
}

impl Certs {
    fn make() -> Certs {
        let dir = temp_dir();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // Names of their own: OpenSSL (redis-cli) takes a certificate whose
        // subject is its issuer's for a self-signed one.
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "ember test CA");
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let leaf = |names: Vec<String>| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(names.clone()).unwrap();
            params
                .distinguished_name
                .push(DnType::CommonName, names[0].as_str());
            let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server, server_key) = leaf(vec!["localhost".into(), "127.0.0.1".into()]);
        let (client, client_key) = leaf(vec!["client".into()]);
        for (name, pem) in [
            ("ca.crt", ca.pem()),
            ("server.crt", server),
            ("server.key", server_key),
            ("client.crt", client),
            ("client.key", client_key),
        ] {
            std::fs::write(dir.join(name), pem).unwrap();
        }
        Certs { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// ember's flags for TLS on `port`, clients authenticated as `auth`.
    fn flags(&self, port: u16, auth: &str) -> Vec<String> {
        [
            ("--tls-port", port.to_string()),
            ("--tls-cert-file", self.path("server.crt")),
            ("--tls-key-file", self.path("server.key")),
            ("--tls-ca-cert-file", self.path("ca.crt")),
            ("--tls-auth-clients", auth.to_string()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v])
        .collect()
    }
}

fn start(certs: &Certs, auth: &str) -> (Server, u16) {
    let tls_port = free_port();
    let flags = certs.flags(tls_port, auth);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    (Server::start(2, &flags), tls_port)
}

fn pem_certs(path: &Path) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(path)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A TLS client of `port`, showing the client certificate if `with_cert`.
fn connect(certs: &Certs, port: u16, with_cert: bool) -> std::io::Result<TlsClient> {
    connect_with(certs, port, with_cert, rustls::DEFAULT_VERSIONS)
}

/// [`connect`] offering only `versions`.
fn connect_with(
    certs: &Certs,
    port: u16,
    with_cert: bool,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> std::io::Result<TlsClient> {
    connect_at(certs, "127.0.0.1", port, with_cert, versions)
}

/// [`connect_with`] to address `ip`.
fn connect_at(
    certs: &Certs,
    ip: &str,
    port: u16,
    with_cert: bool,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> std::io::Result<TlsClient> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in pem_certs(&certs.dir.join("ca.crt")) {
        roots.add(cert).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    let config = if with_cert {
        let key = PrivateKeyDer::from_pem_file(certs.dir.join("client.key")).unwrap();
        builder
            .with_client_auth_cert(pem_certs(&certs.dir.join("client.crt")), key)
            .unwrap()
    } else {
        builder.with_no_client_auth()
    };
    let conn =
        rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("localhost").unwrap())
            .unwrap();
    let sock = TcpStream::connect((ip, port))?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(TlsClient {
        tls: rustls::StreamOwned::new(conn, sock),
        buf: Vec::new(),
    })
}

struct TlsClient {
    tls: rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
    buf: Vec<u8>,
}

impl TlsClient {
    /// Sends one command and reads one reply (as raw RESP text up to
    /// its end; enough for simple, integer and bulk replies).
    fn cmd(&mut self, args: &[&[u8]]) -> std::io::Result<Vec<u8>> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.tls.write_all(&out)?;
        self.tls.flush()?;
        loop {
            if let Some(len) = reply_len(&self.buf) {
                let rest = self.buf.split_off(len);
                return Ok(std::mem::replace(&mut self.buf, rest));
            }
            let mut chunk = [0u8; 16384];
            let n = self.tls.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The length of the first whole simple, error, integer or bulk reply.
fn reply_len(buf: &[u8]) -> Option<usize> {
    let line_end = buf.windows(2).position(|w| w == b"\r\n")? + 2;
    if buf[0] != b'$' {
        return Some(line_end);
    }
    let n: i64 = std::str::from_utf8(&buf[1..line_end - 2])
        .ok()?
        .parse()
        .ok()?;
    if n < 0 {
        return Some(line_end);
    }
    let total = line_end + n as usize + 2;
    (buf.len() >= total).then_some(total)
}

#[test]
fn commands_work_over_tls_and_the_plain_port_stays() {
    let certs = Certs::make();
    let (server, tls_port) = start(&certs, "yes");
    let mut c = connect(&certs, tls_port, true).unwrap();
    assert_eq!(c.cmd(&[b"PING"]).unwrap(), b"+PONG\r\n");
    assert_eq!(c.cmd(&[b"SET", b"k", b"v"]).unwrap(), b"+OK\r\n");
    // A value larger than the TLS layer buffers (64 KiB of plaintext) and
    // than a record (16 KiB), both ways, on keys of both shards.
    let big = vec![b'x'; 3 * 1024 * 1024];
    for key in [&b"big:1"[..], b"big:2", b"big:3"] {
        assert_eq!(c.cmd(&[b"SET", key, &big]).unwrap(), b"+OK\r\n");
        let got = c.cmd(&[b"GET", key]).unwrap();
        assert_eq!(got.len(), big.len() + "$3145728\r\n\r\n".len());
        assert!(got.ends_with(b"xx\r\n"));
    }
    // The plain port sees the same keyspace.
    let mut plain = server.raw();
    assert_eq!(plain.cmd(&["GET", "k"]), Reply::bulk("v"));
    assert_eq!(plain.cmd(&["STRLEN", "big:2"]), Reply::Int(3 * 1024 * 1024));
    let tls_port_text = tls_port.to_string();
    assert_eq!(
        plain.cmd(&["CONFIG", "GET", "tls-port"]),
        Reply::Array(vec![Reply::bulk("tls-port"), Reply::bulk(&tls_port_text)])
    );
    // A plain client on the TLS port gets nowhere, and breaks nothing.
    let mut wrong = TcpStream::connect(("127.0.0.1", tls_port)).unwrap();
    wrong
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = wrong.write_all(b"PING\r\n");
    let mut answer = [0u8; 64];
    let n = wrong.read(&mut answer).unwrap_or(0);
    assert!(!answer[..n].starts_with(b"+PONG"));
    assert_eq!(c.cmd(&[b"PING"]).unwrap(), b"+PONG\r\n");
}

#[test]
fn client_certificates_are_required_optional_or_not_asked_for() {
    let certs = Certs::make();
    let (_server, port) = start(&certs, "yes");
    let refused = connect(&certs, port, false).and_then(|mut c| c.cmd(&[b"PING"]));
    assert!(refused.is_err(), "no certificate, tls-auth-clients yes");
    assert!(connect(&certs, port, true).unwrap().cmd(&[b"PING"]).is_ok());

    for auth in ["optional", "no"] {
        let (_server, port) = start(&certs, auth);
        let mut c = connect(&certs, port, false).unwrap();
        assert_eq!(c.cmd(&[b"PING"]).unwrap(), b"+PONG\r\n", "{auth}");
    }
}

#[test]
fn redis_cli_talks_to_the_tls_port() {
    let Ok(out) = std::process::Command::new("redis-cli")
        .arg("--help")
        .output()
    else {
        eprintln!("skipped: no redis-cli");
        return;
    };
    if !String::from_utf8_lossy(&out.stdout).contains("--tls")
        && !String::from_utf8_lossy(&out.stderr).contains("--tls")
    {
        eprintln!("skipped: redis-cli without TLS");
        return;
    }
    let certs = Certs::make();
    let (_server, port) = start(&certs, "yes");
    let cli = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["--tls", "--cacert", &certs.path("ca.crt")])
            .args([
                "--cert",
                &certs.path("client.crt"),
                "--key",
                &certs.path("client.key"),
            ])
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(cli(&["SET", "via-cli", "yes"]), "OK");
    assert_eq!(cli(&["GET", "via-cli"]), "yes");
}

#[test]
fn start_up_refuses_missing_or_broken_tls_files() {
    let certs = Certs::make();
    let port = free_port();
    let no_key = format!(
        "tls-port {port}\ntls-cert-file {}\n",
        certs.path("server.crt")
    );
    let (status, stderr) = run_with_bad_config(&no_key);
    assert!(!status.success());
    assert!(
        stderr.contains("tls-cert-file and tls-key-file"),
        "{stderr}"
    );

    std::fs::write(certs.dir.join("garbage.crt"), "not a certificate\n").unwrap();
    let garbage = format!(
        "tls-port {port}\ntls-cert-file {}\ntls-key-file {}\ntls-auth-clients no\n",
        certs.path("garbage.crt"),
        certs.path("server.key")
    );
    let (status, stderr) = run_with_bad_config(&garbage);
    assert!(!status.success());
    assert!(stderr.contains("garbage.crt"), "{stderr}");

    let no_ca = format!(
        "tls-port {port}\ntls-cert-file {}\ntls-key-file {}\n",
        certs.path("server.crt"),
        certs.path("server.key")
    );
    let (status, stderr) = run_with_bad_config(&no_ca);
    assert!(!status.success());
    assert!(
        stderr.contains("Either tls-ca-cert-file or tls-ca-cert-dir"),
        "{stderr}"
    );
}

#[test]
fn config_set_reloads_the_tls_set_up_or_refuses_and_keeps_it() {
    let certs = Certs::make();
    let (server, port) = start(&certs, "yes");
    let mut admin = server.raw();
    // Only TLS 1.3: a 1.2-only client is turned away, a 1.3 one served.
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "tls-protocols", "TLSv1.3"]),
        Reply::ok()
    );
    let tls12 = connect_with(&certs, port, true, &[&rustls::version::TLS12])
        .and_then(|mut c| c.cmd(&[b"PING"]));
    assert!(tls12.is_err());
    assert!(connect(&certs, port, true).unwrap().cmd(&[b"PING"]).is_ok());
    // A client certificate is no longer asked for.
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "tls-auth-clients", "no"]),
        Reply::ok()
    );
    assert!(connect(&certs, port, false)
        .unwrap()
        .cmd(&[b"PING"])
        .is_ok());
    // A certificate file that does not load: refused, the old set-up kept.
    let garbage = certs.dir.join("garbage.crt");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "tls-cert-file", &garbage.display().to_string()]),
        Reply::Error("ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.".into())
    );
    let cert_now = admin.cmd(&["CONFIG", "GET", "tls-cert-file"]);
    assert_eq!(cert_now.items()[1].text(), certs.path("server.crt"));
    assert!(connect(&certs, port, false)
        .unwrap()
        .cmd(&[b"PING"])
        .is_ok());
    // Names rustls does not have are refused by name.
    let refused = admin.cmd(&["CONFIG", "SET", "tls-protocols", "TLSv1.1"]);
    assert!(
        matches!(&refused, Reply::Error(e) if e.contains("not supported")),
        "{refused:?}"
    );
    let refused = admin.cmd(&["CONFIG", "SET", "tls-ciphersuites", "TLS_NOPE"]);
    assert!(
        matches!(&refused, Reply::Error(e) if e.contains("unknown suite TLS_NOPE")),
        "{refused:?}"
    );
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "tls-ciphersuites",
            "TLS_CHACHA20_POLY1305_SHA256"
        ]),
        Reply::ok()
    );
    let mut c = connect(&certs, port, false).unwrap();
    assert_eq!(c.cmd(&[b"PING"]).unwrap(), b"+PONG\r\n");
    assert_eq!(
        c.tls.conn.negotiated_cipher_suite().map(|s| s.suite()),
        Some(rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256)
    );
}

#[test]
fn redis_rs_talks_rediss_to_the_tls_port() {
    let certs = Certs::make();
    let (_server, port) = start(&certs, "yes");
    let read = |name: &str| std::fs::read(certs.dir.join(name)).unwrap();
    let client = redis::Client::build_with_tls(
        format!("rediss://localhost:{port}/"),
        redis::TlsCertificates {
            client_tls: Some(redis::ClientTlsConfig {
                client_cert: read("client.crt"),
                client_key: read("client.key"),
            }),
            root_cert: Some(read("ca.crt")),
        },
    )
    .unwrap();
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("rs")
        .arg("tls")
        .query(&mut con)
        .unwrap();
    let got: String = redis::cmd("GET").arg("rs").query(&mut con).unwrap();
    assert_eq!(got, "tls");
    let pipelined: Vec<i64> = redis::pipe()
        .cmd("INCR")
        .arg("n")
        .cmd("INCR")
        .arg("n")
        .query(&mut con)
        .unwrap();
    assert_eq!(pipelined, [1, 2]);
}

/// `server.key` encrypted by openssl with `pass` (OpenSSL 3's `pkey
/// -aes256`: PKCS#8, PBES2 with PBKDF2 and AES-256-CBC), or None without
/// openssl.
fn encrypted_key(certs: &Certs, pass: &str) -> Option<String> {
    let out = certs.path("server-enc.key");
    let made = std::process::Command::new("openssl")
        .args(["pkey", "-in", &certs.path("server.key"), "-aes256"])
        .args(["-passout", &format!("pass:{pass}"), "-out", &out])
        .status();
    match made {
        Ok(s) if s.success() => {
            let text = std::fs::read_to_string(&out).unwrap();
            assert!(text.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
            Some(out)
        }
        _ => {
            eprintln!("skipped: no openssl to encrypt a key with");
            None
        }
    }
}

#[test]
fn an_encrypted_key_file_opens_with_tls_key_file_pass() {
    let certs = Certs::make();
    let Some(key) = encrypted_key(&certs, "s3kr1t") else {
        return;
    };
    let port = free_port();
    let conf = |pass: Option<&str>| {
        let mut text = format!(
            "tls-port {port}\ntls-cert-file {}\ntls-key-file {key}\ntls-ca-cert-file {}\n",
            certs.path("server.crt"),
            certs.path("ca.crt")
        );
        if let Some(pass) = pass {
            text.push_str(&format!("tls-key-file-pass {pass}\n"));
        }
        text
    };
    // A wrong or missing password stops start-up, naming the file and not
    // the password.
    let (status, stderr) = run_with_bad_config(&conf(Some("wrong-one")));
    assert!(!status.success());
    assert!(
        stderr.contains("Failed to load private key") && stderr.contains("server-enc.key"),
        "{stderr}"
    );
    assert!(stderr.contains("bad decrypt"), "{stderr}");
    assert!(!stderr.contains("wrong-one"), "{stderr}");
    let (status, stderr) = run_with_bad_config(&conf(None));
    assert!(!status.success());
    assert!(stderr.contains("no password"), "{stderr}");

    let server = Server::start_with_config(1, &conf(Some("s3kr1t")));
    let mut c = connect(&certs, port, true).unwrap();
    assert_eq!(c.cmd(&[b"PING"]).unwrap(), b"+PONG\r\n");
    // CONFIG GET shows the password, as redis-server 7.0.15 does.
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "tls-key-file-pass"]),
        bulks(&["tls-key-file-pass", "s3kr1t"])
    );
    // A wrong one by CONFIG SET: refused, the old set-up and value kept.
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "tls-key-file-pass", "nope"]),
        Reply::Error("ERR CONFIG SET failed (possibly related to argument 'tls-key-file-pass') - Unable to update TLS configuration. Check server logs.".into())
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "tls-key-file-pass"]),
        bulks(&["tls-key-file-pass", "s3kr1t"])
    );
    assert!(connect(&certs, port, true).unwrap().cmd(&[b"PING"]).is_ok());
    // Back to the plain key and no password, in one CONFIG SET.
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "tls-key-file",
            &certs.path("server.key"),
            "tls-key-file-pass",
            ""
        ]),
        Reply::ok()
    );
    assert!(connect(&certs, port, true).unwrap().cmd(&[b"PING"]).is_ok());
    // The password is redacted in SLOWLOG, as Redis does.
    admin.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    admin.cmd(&["CONFIG", "SET", "tls-key-file-pass", ""]);
    let entry = admin.cmd(&["SLOWLOG", "GET", "1"]).items()[0].items()[3].items();
    assert_eq!(entry[3].text(), "(redacted)");
}

/// What makes a server a replica that speaks TLS to its master, showing
/// the server certificate as its client certificate (Redis's default
/// where no `tls-client-cert-file` is set).
fn tls_replica_flags(certs: &Certs) -> Vec<String> {
    [
        ("--tls-replication", "yes".to_string()),
        ("--tls-cert-file", certs.path("server.crt")),
        ("--tls-key-file", certs.path("server.key")),
        ("--tls-ca-cert-file", certs.path("ca.crt")),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}

/// Keys for the full sync, written before the replica links.
fn write_before(master: &mut Raw) {
    for i in 0..50 {
        assert_eq!(
            master.cmd(&["SET", &format!("before:{i}"), &i.to_string()]),
            Reply::ok()
        );
    }
}

/// The keys of [`write_before`] reached the replica (the full sync), a
/// key written now does too (the stream), and its link is up.
fn replicates(master: &mut Raw, replica: &mut Raw) {
    let synced = wait_until(Duration::from_secs(20), || {
        replica.cmd(&["GET", "before:49"]) == Reply::bulk("49")
    });
    assert!(
        synced,
        "no full sync over TLS: {:?}",
        replica.info_field("replication", "master_link_status")
    );
    assert_eq!(master.cmd(&["SET", "after", "streamed"]), Reply::ok());
    // A value past rustls's 64 KiB of buffered plaintext goes out whole.
    let big = "x".repeat(300_000);
    assert_eq!(master.cmd(&["SET", "big", &big]), Reply::ok());
    assert!(wait_until(Duration::from_secs(10), || {
        replica.cmd(&["GET", "after"]) == Reply::bulk("streamed")
            && replica.cmd(&["STRLEN", "big"]) == int(300_000)
    }));
    assert_eq!(
        replica
            .info_field("replication", "master_link_status")
            .as_deref(),
        Some("up")
    );
    assert_eq!(replica.cmd(&["DBSIZE"]), int(52));
}

#[test]
fn an_ember_replica_of_ember_over_tls() {
    let certs = Certs::make();
    let (master, tls_port) = start(&certs, "yes");
    let flags = tls_replica_flags(&certs);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let replica = Server::start(1, &flags);
    let (mut m, mut r) = (master.raw(), replica.raw());
    write_before(&mut m);
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &tls_port.to_string()]),
        Reply::ok()
    );
    replicates(&mut m, &mut r);
    assert_eq!(
        m.info_field("replication", "connected_slaves").as_deref(),
        Some("1")
    );
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "tls-replication"]),
        bulks(&["tls-replication", "yes"])
    );
}

#[test]
fn a_replica_the_master_does_not_trust_does_not_link() {
    let certs = Certs::make();
    // tls-replication without a certificate: the TLS set-up does not
    // build and start-up stops, as in Redis.
    let conf = format!(
        "tls-replication yes\ntls-ca-cert-file {}\n",
        certs.path("ca.crt")
    );
    let (status, stderr) = run_with_bad_config(&conf);
    assert!(!status.success());
    assert!(stderr.contains("tls-cert-file"), "{stderr}");
    // A certificate another CA signed: the master refuses it, the link
    // stays down.
    let (master, tls_port) = start(&certs, "yes");
    let other = Certs::make();
    let flags = [
        "--tls-replication".to_string(),
        "yes".into(),
        "--tls-cert-file".into(),
        other.path("server.crt"),
        "--tls-key-file".into(),
        other.path("server.key"),
        "--tls-ca-cert-file".into(),
        certs.path("ca.crt"),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let replica = Server::start(1, &flags);
    let mut r = replica.raw();
    master.raw().cmd(&["SET", "k", "v"]);
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &tls_port.to_string()]),
        Reply::ok()
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        r.info_field("replication", "master_link_status").as_deref(),
        Some("down")
    );
    assert_eq!(r.cmd(&["GET", "k"]), Reply::Nil);
}

/// redis-server's arguments for TLS with the test's certificates.
fn redis_tls_args(certs: &Certs) -> Vec<String> {
    [
        ("--tls-cert-file", certs.path("server.crt")),
        ("--tls-key-file", certs.path("server.key")),
        ("--tls-ca-cert-file", certs.path("ca.crt")),
        ("--repl-diskless-sync-delay", "0".into()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}

#[test]
fn an_ember_replica_of_a_redis_tls_master() {
    let certs = Certs::make();
    let redis_tls = free_port();
    let mut args = redis_tls_args(&certs);
    args.extend(["--tls-port".into(), redis_tls.to_string()]);
    let Some(redis) = common::reference::Redis::start(&args) else {
        eprintln!("redis-server did not start with TLS: test skipped (CI installs it)");
        return;
    };
    let flags = tls_replica_flags(&certs);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let replica = Server::start(2, &flags);
    let (mut m, mut r) = (Raw::connect(redis.port), replica.raw());
    write_before(&mut m);
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &redis_tls.to_string()]),
        Reply::ok()
    );
    replicates(&mut m, &mut r);
}

#[test]
fn a_redis_replica_of_an_ember_tls_master() {
    let certs = Certs::make();
    let (master, tls_port) = start(&certs, "yes");
    let mut m = master.raw();
    write_before(&mut m);
    let mut args = redis_tls_args(&certs);
    args.extend(["--tls-replication".into(), "yes".into()]);
    args.extend([
        "--replicaof".into(),
        "127.0.0.1".into(),
        tls_port.to_string(),
    ]);
    let Some(redis) = common::reference::Redis::start(&args) else {
        eprintln!("redis-server did not start with TLS: test skipped (CI installs it)");
        return;
    };
    replicates(&mut m, &mut Raw::connect(redis.port));
    assert_eq!(
        m.info_field("replication", "connected_slaves").as_deref(),
        Some("1")
    );
}

/// redis-py's TLS client (`ssl=True`) against the TLS port: SET, GET and a
/// pipeline, with the CA given and, when `cert`, the client certificate.
/// Prints what failed; exits non-zero then.
const REDIS_PY_TLS: &str = r#"
import sys, redis
port, ca, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
kw = dict(host="localhost", port=port, ssl=True, ssl_ca_certs=ca, socket_timeout=5)
if cert:
    kw.update(ssl_certfile=cert, ssl_keyfile=key)
r = redis.Redis(**kw)
r.set("py", "tls")
assert r.get("py") == b"tls", r.get("py")
p = r.pipeline(transaction=False)
p.incr("pyn")
p.incr("pyn")
assert p.execute() == [1, 2]
if cert:
    url = redis.from_url(f"rediss://localhost:{port}/0", ssl_ca_certs=ca,
                         ssl_certfile=cert, ssl_keyfile=key, socket_timeout=5)
    assert url.get("py") == b"tls"
print("ok")
"#;

/// Runs [`REDIS_PY_TLS`]; None where python3 has no redis module.
fn redis_py(certs: &Certs, port: u16, with_cert: bool) -> Option<(bool, String)> {
    let has_module = std::process::Command::new("python3")
        .args(["-c", "import redis"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_module {
        eprintln!(
            "skipped: python3 with redis-py is not installed (pip install redis; CI installs it)"
        );
        return None;
    }
    let (cert, key) = if with_cert {
        (certs.path("client.crt"), certs.path("client.key"))
    } else {
        (String::new(), String::new())
    };
    let out = std::process::Command::new("python3")
        .args(["-c", REDIS_PY_TLS, &port.to_string(), &certs.path("ca.crt")])
        .args([cert, key])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    Some((out.status.success(), text))
}

#[test]
fn redis_py_talks_ssl_to_the_tls_port() {
    let certs = Certs::make();
    // The server's certificate checked, no client certificate asked for.
    let (_server, port) = start(&certs, "no");
    let Some((ok, text)) = redis_py(&certs, port, false) else {
        return;
    };
    assert!(ok, "{text}");
    // A client certificate required: shown, it works; not shown, refused.
    let (_server, port) = start(&certs, "yes");
    let (ok, text) = redis_py(&certs, port, true).unwrap();
    assert!(ok, "{text}");
    let (ok, text) = redis_py(&certs, port, false).unwrap();
    assert!(!ok, "a client without a certificate was served: {text}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
}

#[test]
fn config_set_bind_moves_the_tls_listeners_too() {
    let certs = Certs::make();
    let (server, port) = start(&certs, "yes");
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "bind", "127.0.0.2"]),
        Reply::ok()
    );
    for _ in 0..6 {
        let mut c = connect_at(&certs, "127.0.0.2", port, true, rustls::DEFAULT_VERSIONS).unwrap();
        assert_eq!(c.cmd(&[b"PING"]).unwrap(), b"+PONG\r\n");
    }
    assert!(wait_until(Duration::from_secs(5), || {
        TcpStream::connect(("127.0.0.1", port)).is_err()
    }));
}

//! The TLS parameters and the TLS set-ups they make: the server's, that
//! `net::tls` runs `tls-port`'s connections with, and (`tls-replication
//! yes`) the client's, that a replica's link to its master connects with.
//! Both are built at start and again by a CONFIG SET of any `tls-*`
//! parameter (Redis reloads its TLS contexts the same way), and a set-up
//! that does not build refuses the CONFIG SET and keeps the old.
//!
//! What rustls does not have is refused by name: TLS 1.0 and 1.1, cipher
//! names it does not know. Encrypted key files (`tls-key-file-pass`) are
//! decrypted by `tls_key`.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{CipherSuite, ClientConfig, RootCertStore, ServerConfig, SupportedProtocolVersion};

use super::kind::{Custom, Value};
use super::live::Live;

/// `tls-auth-clients`' options, in Redis's spelling.
pub const AUTH_CLIENTS: &[&str] = &["no", "yes", "optional"];

/// The set-up new TLS connections start from (None: no `tls-port`).
static CURRENT: RwLock<Option<Arc<ServerConfig>>> = RwLock::new(None);

/// The client set-up a link to a master starts from (None: no
/// `tls-replication`).
static CLIENT: RwLock<Option<Arc<ClientConfig>>> = RwLock::new(None);

/// The TLS set-up a new connection of `tls-port` starts from.
pub fn current() -> Option<Arc<ServerConfig>> {
    CURRENT.read().ok().and_then(|c| c.clone())
}

/// The TLS set-up a replica connects to its master with, while
/// `tls-replication` is on.
pub fn client() -> Option<Arc<ClientConfig>> {
    CLIENT.read().ok().and_then(|c| c.clone())
}

/// Builds the set-ups from the parameters now and makes them current (new
/// connections take them; those open keep theirs). Nothing to build
/// without `tls-port` or `tls-replication` (Redis's condition too); with
/// either, the server's set-up is built, since Redis needs
/// `tls-cert-file` and `tls-key-file` for both.
pub fn rebuild(live: &Live) -> Result<(), String> {
    let replication = live.tls_replication();
    if live.tls_port() == 0 && !replication {
        return Ok(());
    }
    let server = server_config(live)?;
    let client = replication.then(|| client_config(live)).transpose()?;
    if let Ok(mut current) = CURRENT.write() {
        *current = Some(server);
    }
    if let Ok(mut current) = CLIENT.write() {
        *current = client;
    }
    Ok(())
}

fn text(slot: &RwLock<String>) -> String {
    slot.read().map_or_else(|_| String::new(), |t| t.clone())
}

fn put(slot: &RwLock<String>, value: Value) {
    if let (Value::Text(text), Ok(mut held)) = (value, slot.write()) {
        *held = text;
    }
}

fn any_text(_: &Live, text: &str) -> Result<Value, String> {
    Ok(Value::Text(text.to_string()))
}

/// A text parameter kept as given, in slot `$field`.
macro_rules! text_param {
    ($name:ident, $field:ident, $parse:expr) => {
        pub(super) static $name: Custom = Custom {
            default: "",
            parse: $parse,
            read: |live| Value::Text(text(&live.v.$field)),
            store: |live, value| put(&live.v.$field, value),
        };
    };
}

text_param!(CERT_FILE, tls_cert_file, any_text);
text_param!(KEY_FILE, tls_key_file, any_text);
text_param!(KEY_FILE_PASS, tls_key_file_pass, any_text);
text_param!(CLIENT_CERT_FILE, tls_client_cert_file, any_text);
text_param!(CLIENT_KEY_FILE, tls_client_key_file, any_text);
text_param!(CLIENT_KEY_FILE_PASS, tls_client_key_file_pass, any_text);
text_param!(CA_CERT_FILE, tls_ca_cert_file, any_text);
text_param!(CA_CERT_DIR, tls_ca_cert_dir, any_text);
text_param!(PROTOCOLS, tls_protocols, |_, t| {
    protocols(t)?;
    Ok(Value::Text(t.to_string()))
});
text_param!(CIPHERS, tls_ciphers, |_, t| {
    suites(t, TLS12_NAMES, "tls-ciphers")?;
    Ok(Value::Text(t.to_string()))
});
text_param!(CIPHERSUITES, tls_ciphersuites, |_, t| {
    suites(t, TLS13_NAMES, "tls-ciphersuites")?;
    Ok(Value::Text(t.to_string()))
});

impl Live {
    pub fn tls_port(&self) -> u16 {
        self.v.tls_port.load(Relaxed) as u16
    }

    /// `tls-replication`: a replica's link to its master speaks TLS.
    pub fn tls_replication(&self) -> bool {
        self.v.tls_replication.load(Relaxed)
    }
}

/// `tls-protocols`: Redis's words; empty is TLS 1.2 and 1.3.
fn protocols(text: &str) -> Result<Vec<&'static SupportedProtocolVersion>, String> {
    let mut versions = Vec::new();
    for word in text.split_whitespace() {
        let version = match word.to_ascii_lowercase().as_str() {
            "tlsv1.2" => &rustls::version::TLS12,
            "tlsv1.3" => &rustls::version::TLS13,
            "tlsv1" | "tlsv1.1" => {
                return Err(format!(
                    "{word} is not supported: ember's TLS has TLSv1.2 and TLSv1.3"
                ))
            }
            _ => return Err(format!("Invalid tls-protocols specified: {word}")),
        };
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    if versions.is_empty() {
        versions = vec![&rustls::version::TLS13, &rustls::version::TLS12];
    }
    Ok(versions)
}

/// OpenSSL's names of the TLS 1.2 suites rustls has.
const TLS12_NAMES: &[(&str, CipherSuite)] = &[
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// The TLS 1.3 suites, by their standard (and OpenSSL's) names.
const TLS13_NAMES: &[(&str, CipherSuite)] = &[
    (
        "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_256_GCM_SHA384,
    ),
    (
        "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_128_GCM_SHA256,
    ),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ),
];

/// A colon-separated list of suite names (`tls-ciphers`, `tls-ciphersuites`),
/// in the order given; empty: rustls's defaults.
fn suites(
    text: &str,
    names: &[(&str, CipherSuite)],
    param: &str,
) -> Result<Vec<CipherSuite>, String> {
    text.split([':', ' '])
        .filter(|w| !w.is_empty())
        .map(|word| {
            names
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(word))
                .map(|(_, suite)| *suite)
                .ok_or_else(|| {
                    let known: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
                    format!(
                        "Failed to configure {param}: unknown suite {word} (ember's TLS has {})",
                        known.join(", ")
                    )
                })
        })
        .collect()
}

/// The crypto provider with the suites `tls-ciphers` (TLS 1.2) and
/// `tls-ciphersuites` (TLS 1.3) name, each left at rustls's defaults when
/// empty.
fn provider(live: &Live) -> Result<CryptoProvider, String> {
    let mut provider = rustls::crypto::ring::default_provider();
    let tls12 = suites(&text(&live.v.tls_ciphers), TLS12_NAMES, "tls-ciphers")?;
    let tls13 = suites(
        &text(&live.v.tls_ciphersuites),
        TLS13_NAMES,
        "tls-ciphersuites",
    )?;
    let keep = |suite: CipherSuite, is13: bool| {
        let chosen = if is13 { &tls13 } else { &tls12 };
        chosen.is_empty() || chosen.contains(&suite)
    };
    provider
        .cipher_suites
        .retain(|s| keep(s.suite(), s.version() == &rustls::version::TLS13));
    Ok(provider)
}

/// The server's TLS set-up from the `tls-*` parameters.
fn server_config(live: &Live) -> Result<Arc<ServerConfig>, String> {
    let cert_file = text(&live.v.tls_cert_file);
    let key_file = text(&live.v.tls_key_file);
    if cert_file.is_empty() || key_file.is_empty() {
        return Err(
            "Failed to configure TLS: tls-port and tls-replication need tls-cert-file and tls-key-file".into(),
        );
    }
    let certs = load_certs(&cert_file)?;
    let key = super::tls_key::load(&key_file, &text(&live.v.tls_key_file_pass))?;
    let provider = Arc::new(provider(live)?);
    let versions = protocols(&text(&live.v.tls_protocols))?;
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Failed to configure TLS: {e}"))?;
    let auth_clients = live.v.tls_auth_clients.load(Relaxed);
    let builder = if auth_clients == 0 {
        builder.with_no_client_auth()
    } else {
        let roots = ca_roots(live)?;
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
        let verifier = if auth_clients == 2 {
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
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Failed to configure TLS: {cert_file}: {e}"))?;
    config.ignore_client_order = live.v.tls_prefer_server_ciphers.load(Relaxed);
    let cache_size = live.v.tls_session_cache_size.load(Relaxed) as usize;
    config.session_storage = if live.v.tls_session_caching.load(Relaxed) && cache_size > 0 {
        ServerSessionMemoryCache::new(cache_size)
    } else {
        Arc::new(NoServerSessionStorage {})
    };
    Ok(Arc::new(config))
}

/// The certificate chain in `path`.
fn load_certs(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect())
        .map_err(|e| format!("Failed to load certificate: {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "Failed to load certificate: {path}: no certificate in it"
        ));
    }
    Ok(certs)
}

/// The client's TLS set-up, for a replica's link to its master: the
/// master's certificate must be signed by a CA of `tls-ca-cert-file` /
/// `tls-ca-cert-dir`, and the replica shows `tls-client-cert-file` (with
/// `tls-client-key-file`, `tls-client-key-file-pass`) or, where that is
/// not set, the server's own `tls-cert-file`, as Redis does. The master's
/// name is not checked against its certificate, only its chain: Redis's
/// replica (OpenSSL's `SSL_VERIFY_PEER` without a host) checks no more,
/// and TLS set-ups made for Redis (a certificate naming the master's DNS
/// name, `replicaof` by IP) must keep working.
fn client_config(live: &Live) -> Result<Arc<ClientConfig>, String> {
    let (mut cert_file, mut key_file, mut pass) = (
        text(&live.v.tls_client_cert_file),
        text(&live.v.tls_client_key_file),
        text(&live.v.tls_client_key_file_pass),
    );
    if cert_file.is_empty() {
        cert_file = text(&live.v.tls_cert_file);
        key_file = text(&live.v.tls_key_file);
        pass = text(&live.v.tls_key_file_pass);
    }
    let provider = Arc::new(provider(live)?);
    let roots = Arc::new(ca_roots(live)?);
    let versions = protocols(&text(&live.v.tls_protocols))?;
    let chain =
        rustls::client::WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
            .build()
            .map_err(|e| format!("Failed to configure TLS: master certificates: {e}"))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Failed to configure TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainOnly(chain)));
    let config = if cert_file.is_empty() || key_file.is_empty() {
        builder.with_no_client_auth()
    } else {
        let certs = load_certs(&cert_file)?;
        let key = super::tls_key::load(&key_file, &pass)?;
        builder
            .with_client_auth_cert(certs, key)
            .map_err(|e| format!("Failed to configure TLS: {cert_file}: {e}"))?
    };
    Ok(Arc::new(config))
}

/// A master's certificate checked as Redis's replica checks it: a chain
/// to a trusted CA, in its dates, for a server; the name it is for is not
/// compared with the one `replicaof` gave (see [`client_config`]).
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::CertificateError::{NotValidForName, NotValidForNameContext};
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                NotValidForName | NotValidForNameContext { .. },
            )) => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The CAs that sign client certificates: `tls-ca-cert-file`, and every
/// file in `tls-ca-cert-dir`. Redis refuses to start without one while
/// clients must show certificates; so does this.
fn ca_roots(live: &Live) -> Result<RootCertStore, String> {
    let (ca_file, ca_dir) = (
        text(&live.v.tls_ca_cert_file),
        text(&live.v.tls_ca_cert_dir),
    );
    let mut paths = Vec::new();
    if !ca_file.is_empty() {
        paths.push(std::path::PathBuf::from(&ca_file));
    }
    if !ca_dir.is_empty() {
        let dir = std::fs::read_dir(&ca_dir)
            .map_err(|e| format!("Failed to load CA certificates: {ca_dir}: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_and_suites_are_read_as_redis_names_them() {
        assert_eq!(protocols("").unwrap().len(), 2);
        assert_eq!(protocols("TLSv1.3").unwrap(), vec![&rustls::version::TLS13]);
        assert_eq!(protocols("tlsv1.2 TLSv1.2").unwrap().len(), 1);
        assert!(protocols("TLSv1.1").unwrap_err().contains("not supported"));
        assert!(protocols("SSLv3").is_err());
        let picked = suites(
            "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256",
            TLS13_NAMES,
            "x",
        )
        .unwrap();
        assert_eq!(
            picked,
            [
                CipherSuite::TLS13_AES_128_GCM_SHA256,
                CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
            ]
        );
        assert!(suites("", TLS12_NAMES, "x").unwrap().is_empty());
        assert!(suites("HIGH:!aNULL", TLS12_NAMES, "tls-ciphers")
            .unwrap_err()
            .contains("unknown suite HIGH"));
    }
}

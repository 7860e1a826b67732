//! Reading a PEM private key file for TLS (`tls-key-file`,
//! `tls-client-key-file`), plain or encrypted with a password
//! (`tls-key-file-pass`, `tls-client-key-file-pass`), as Redis's OpenSSL
//! reads them.
//!
//! rustls takes plain keys only, so an encrypted one is decrypted here:
//! `-----BEGIN ENCRYPTED PRIVATE KEY-----` is PKCS#8's
//! `EncryptedPrivateKeyInfo`, with PBES2 (PBKDF2 or scrypt, then AES-CBC)
//! as OpenSSL 1.1 and 3 write it (`openssl genpkey -aes256`,
//! `openssl pkey -aes256`, `openssl pkcs8 -topk8 -v2 aes256`). The older
//! OpenSSL form (`Proc-Type: 4,ENCRYPTED` inside `BEGIN RSA PRIVATE KEY`,
//! an MD5 key derivation) is refused with the command that converts it.
//!
//! The password is never part of an error text; the decrypted key is
//! wiped from memory by pkcs8's `SecretDocument` once rustls has its copy.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

const ENCRYPTED_BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
const ENCRYPTED_END: &str = "-----END ENCRYPTED PRIVATE KEY-----";

/// The private key in `path`, decrypted with `pass` when it is encrypted.
/// `Err` is Redis's `Failed to load private key: <file>: <why>`.
pub fn load(path: &str, pass: &str) -> Result<PrivateKeyDer<'static>, String> {
    let fail = |why: &dyn std::fmt::Display| format!("Failed to load private key: {path}: {why}");
    let text = std::fs::read(path).map_err(|e| fail(&e))?;
    from_pem(&text, pass).map_err(|why| fail(&why))
}

/// [`load`] on the file's bytes.
fn from_pem(text: &[u8], pass: &str) -> Result<PrivateKeyDer<'static>, String> {
    let as_text = String::from_utf8_lossy(text);
    if let Some(block) = encrypted_block(&as_text) {
        if pass.is_empty() {
            return Err("the key is encrypted and no password is set (tls-key-file-pass)".into());
        }
        let (label, der) =
            pkcs8::der::pem::decode_vec(block.as_bytes()).map_err(|e| format!("bad PEM: {e}"))?;
        debug_assert_eq!(label, "ENCRYPTED PRIVATE KEY");
        let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
            .map_err(|e| format!("not a PKCS#8 encrypted key: {e}"))?;
        // A wrong password shows as bad padding (or, by chance, as a
        // decryption that is not a key): both read as OpenSSL's words.
        // pkcs5 0.7 names bad padding `EncryptFailed`, hence both.
        let plain = info.decrypt(pass.as_bytes()).map_err(|e| match e {
            pkcs8::Error::EncryptedPrivateKey(
                pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed,
            ) => "bad decrypt (wrong password?)".to_string(),
            e => format!("cannot decrypt: {e}"),
        })?;
        // Decrypted bytes that are not a PKCS#8 key: a wrong password
        // whose padding happened to check.
        pkcs8::PrivateKeyInfo::try_from(plain.as_bytes())
            .map_err(|_| "bad decrypt (wrong password?)".to_string())?;
        return Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            plain.as_bytes().to_vec(),
        )));
    }
    if as_text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err("the key is encrypted in OpenSSL's legacy PEM form, which ember cannot read; convert it with `openssl pkcs8 -topk8 -v2 aes256 -in <old> -out <new>`".into());
    }
    PrivateKeyDer::from_pem_slice(text).map_err(|e| e.to_string())
}

/// The `ENCRYPTED PRIVATE KEY` block of a PEM file, if it has one.
fn encrypted_block(text: &str) -> Option<&str> {
    let start = text.find(ENCRYPTED_BEGIN)?;
    let end = text[start..].find(ENCRYPTED_END)? + start + ENCRYPTED_END.len();
    Some(&text[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An EC key made by rcgen, encrypted as OpenSSL 3 does by default
    /// (PBES2: PBKDF2-HMAC-SHA256, 2048 rounds, AES-256-CBC).
    fn encrypted(pass: &str) -> (String, Vec<u8>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let der = key.serialize_der();
        let info = pkcs8::PrivateKeyInfo::try_from(der.as_slice()).unwrap();
        let params =
            pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"saltsalt", &[7; 16])
                .unwrap();
        let doc = info.encrypt_with_params(params, pass.as_bytes()).unwrap();
        let pem = doc
            .to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF)
            .unwrap();
        (pem.to_string(), der)
    }

    #[test]
    fn an_encrypted_key_opens_with_its_password_only() {
        let (pem, der) = encrypted("sekret");
        let text = format!("a comment before the block\n{pem}");
        let key = from_pem(text.as_bytes(), "sekret").unwrap();
        assert_eq!(key.secret_der(), der.as_slice());
        let wrong = from_pem(pem.as_bytes(), "nope").unwrap_err();
        assert!(wrong.contains("bad decrypt"), "{wrong}");
        assert!(!wrong.contains("nope"));
        let none = from_pem(pem.as_bytes(), "").unwrap_err();
        assert!(none.contains("no password"), "{none}");
    }

    #[test]
    fn plain_legacy_and_garbage_keys() {
        let key = rcgen::KeyPair::generate().unwrap();
        let plain = from_pem(key.serialize_pem().as_bytes(), "ignored").unwrap();
        assert_eq!(plain.secret_der(), key.serialize_der().as_slice());
        let legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert!(from_pem(legacy.as_bytes(), "x")
            .unwrap_err()
            .contains("legacy"));
        assert!(from_pem(b"not a key", "").is_err());
        let cut =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert!(from_pem(cut.as_bytes(), "x").is_err());
    }
}

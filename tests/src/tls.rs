//! Throw-away certificates for TLS tests, made with `rcgen`.
//!
//! [`TestPki::generate`] writes, into a private temporary directory, a CA,
//! a server certificate for `127.0.0.1` and `localhost` signed by it (also
//! good as a client certificate, as a cluster node's must be), a
//! client certificate signed by it, and a second, unrelated CA (the "wrong
//! CA" of refusal tests). Everything is PEM; keys are ECDSA P-256. The
//! directory is removed when the value is dropped.

use std::fs;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tempfile::TempDir;

/// The certificate files of one test.
pub struct TestPki {
    dir: TempDir,
}

/// What a TLS server needs: its certificate and key, and the CA its
/// clients' certificates are checked against.
#[derive(Clone, Debug)]
pub struct ServerTls {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
}

/// What a TLS client needs: the CA to verify the server with, and its own
/// certificate and key.
#[derive(Clone, Debug)]
pub struct ClientTls {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn ca_params(name: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params
}

fn leaf_params(name: &str, sans: &[&str], usages: &[ExtendedKeyUsagePurpose]) -> CertificateParams {
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(sans).expect("leaf params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = usages.to_vec();
    params
}

fn write(dir: &Path, name: &str, pem: &str) {
    let path = dir.join(name);
    fs::write(&path, pem).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Writes `<name>.pem` and `<name>.key`, signed by `issuer`.
fn write_leaf(dir: &Path, name: &str, params: CertificateParams, issuer: &Issuer<'_, KeyPair>) {
    let key = KeyPair::generate().expect("generate a key");
    let cert = params.signed_by(&key, issuer).expect("sign a certificate");
    write(dir, &format!("{name}.pem"), &cert.pem());
    write(dir, &format!("{name}.key"), &key.serialize_pem());
}

/// Writes `<name>.pem` (a self-signed CA) and returns it as an issuer.
fn write_ca(dir: &Path, name: &str) -> Issuer<'static, KeyPair> {
    let key = KeyPair::generate().expect("generate a CA key");
    let params = ca_params(name);
    let cert = params.self_signed(&key).expect("self-sign the CA");
    write(dir, &format!("{name}.pem"), &cert.pem());
    Issuer::new(params, key)
}

impl TestPki {
    /// Generates the CA, server, client and wrong-CA certificates.
    pub fn generate() -> TestPki {
        let dir = tempfile::Builder::new()
            .prefix("tg-pki-")
            .tempdir()
            .expect("create a temporary directory for certificates");
        let path = dir.path();
        let ca = write_ca(path, "ca");
        let server = leaf_params(
            "ticketgate test server",
            &["127.0.0.1", "localhost"],
            // Cluster nodes show their server certificate as a client on the bus.
            &[
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
        );
        write_leaf(path, "server", server, &ca);
        let client = leaf_params("tg-sidecar", &[], &[ExtendedKeyUsagePurpose::ClientAuth]);
        write_leaf(path, "client", client, &ca);
        write_ca(path, "other-ca");
        TestPki { dir }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The CA that signed the server and client certificates.
    pub fn ca(&self) -> PathBuf {
        self.file("ca.pem")
    }

    /// A CA that signed nothing here: verifying the server with it fails.
    pub fn other_ca(&self) -> PathBuf {
        self.file("other-ca.pem")
    }

    /// Files for a TLS server (127.0.0.1 / localhost).
    pub fn server(&self) -> ServerTls {
        ServerTls {
            cert: self.file("server.pem"),
            key: self.file("server.key"),
            ca: self.ca(),
        }
    }

    /// Files for a TLS client with a client certificate.
    pub fn client(&self) -> ClientTls {
        ClientTls {
            ca: self.ca(),
            cert: self.file("client.pem"),
            key: self.file("client.key"),
        }
    }
}

impl ClientTls {
    /// The files as the `redis` crate takes them.
    pub fn redis_certificates(&self) -> redis::TlsCertificates {
        let read = |p: &Path| fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        redis::TlsCertificates {
            client_tls: Some(redis::ClientTlsConfig {
                client_cert: read(&self.cert),
                client_key: read(&self.key),
            }),
            root_cert: Some(read(&self.ca)),
        }
    }
}

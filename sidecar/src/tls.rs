//! TLS for the sidecar's Redis and MySQL connections.
//!
//! The certificate flags (`--redis-ca`, `--redis-cert`, `--redis-key`,
//! `--mysql-ca`) are read and checked once at startup by [`init`], before
//! anything connects; every connection the process opens afterwards —
//! single server, cluster node, subscriber, MySQL writer — takes them from
//! here, so no connection can forget them. The work itself is done by the
//! TLS features of the `redis` (`tls-rustls`) and `mysql` (`rustls-tls-ring`)
//! crates: the server certificate is always verified against the given CA
//! (or the built-in web PKI roots without one), including its host name.
//!
//! [`hint`] turns a TLS failure into a sentence that names the flag or URL
//! part to check; such failures are configuration errors, so startup does
//! not retry them.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use clap::Args;
use redis::{ClientTlsConfig, TlsCertificates};

/// The certificate flags, shared by every subcommand.
#[derive(Args, Debug, Default, Clone)]
pub struct TlsArgs {
    /// CA certificate (PEM) that signed the Redis server's certificate; needs a rediss:// URL
    #[arg(long, global = true, env = "TICKETGATE_REDIS_CA", value_name = "FILE")]
    pub redis_ca: Option<PathBuf>,
    /// Client certificate (PEM) for Redis servers that ask for one (tls-auth-clients)
    #[arg(
        long,
        global = true,
        env = "TICKETGATE_REDIS_CERT",
        value_name = "FILE"
    )]
    pub redis_cert: Option<PathBuf>,
    /// Private key (PEM) of --redis-cert
    #[arg(long, global = true, env = "TICKETGATE_REDIS_KEY", value_name = "FILE")]
    pub redis_key: Option<PathBuf>,
    /// CA certificate (PEM) of the MySQL server: connect over TLS and verify it
    #[arg(long, global = true, env = "TICKETGATE_MYSQL_CA", value_name = "FILE")]
    pub mysql_ca: Option<PathBuf>,
}

/// The loaded settings every connection uses.
#[derive(Default)]
struct Settings {
    redis: Option<TlsCertificates>,
    mysql_ca: Option<PathBuf>,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

fn settings() -> &'static Settings {
    SETTINGS.get_or_init(Settings::default)
}

/// Reads and checks the certificate files; call once, before connecting.
/// `redis_url` is the Redis URL of the subcommand, if it has one.
pub fn init(args: &TlsArgs, redis_url: Option<&str>) -> Result<(), String> {
    let redis = redis_certificates(args)?;
    if let (Some(certs), Some(url)) = (&redis, redis_url) {
        if !url.starts_with("rediss://") {
            return Err(format!(
                "--redis-ca/--redis-cert need a rediss:// URL (TLS), got {}",
                scheme_of(url)
            ));
        }
        redis::Client::build_with_tls(url, certs.clone())
            .map_err(|e| format!("Redis TLS settings: {e}"))?;
    }
    if let Some(ca) = &args.mysql_ca {
        read_file(ca, "--mysql-ca")?;
    }
    let loaded = Settings {
        redis,
        mysql_ca: args.mysql_ca.clone(),
    };
    SETTINGS
        .set(loaded)
        .map_err(|_| "TLS settings initialised twice".to_owned())
}

fn scheme_of(url: &str) -> &str {
    url.split_once("://").map(|(s, _)| s).unwrap_or(url)
}

fn read_file(path: &Path, flag: &str) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("cannot read {flag} {}: {e}", path.display()))
}

/// The PEM files of the Redis flags, or `None` when none is given.
fn redis_certificates(args: &TlsArgs) -> Result<Option<TlsCertificates>, String> {
    let client_tls = match (&args.redis_cert, &args.redis_key) {
        (None, None) => None,
        (Some(cert), Some(key)) => Some(ClientTlsConfig {
            client_cert: read_file(cert, "--redis-cert")?,
            client_key: read_file(key, "--redis-key")?,
        }),
        _ => return Err("--redis-cert and --redis-key go together: give both or neither".into()),
    };
    let root_cert = match &args.redis_ca {
        Some(ca) => Some(read_file(ca, "--redis-ca")?),
        None => None,
    };
    if client_tls.is_none() && root_cert.is_none() {
        return Ok(None);
    }
    Ok(Some(TlsCertificates {
        client_tls,
        root_cert,
    }))
}

/// A client for `url`, with the certificates of the flags for a `rediss://` URL.
pub fn redis_client(url: &str) -> redis::RedisResult<redis::Client> {
    match (&settings().redis, url.starts_with("rediss://")) {
        (Some(certs), true) => redis::Client::build_with_tls(url, certs.clone()),
        _ => redis::Client::open(url),
    }
}

/// The certificates for a cluster client, if the flags gave any.
pub fn redis_certs() -> Option<TlsCertificates> {
    settings().redis.clone()
}

/// `opts` with TLS switched on and verified against `--mysql-ca`, when given
/// (TLS options of the URL itself, such as a client certificate, are kept).
pub fn mysql_opts(opts: mysql::OptsBuilder, url_opts: &mysql::Opts) -> mysql::OptsBuilder {
    match &settings().mysql_ca {
        Some(ca) => {
            let ssl = url_opts
                .get_ssl_opts()
                .cloned()
                .unwrap_or_default()
                .with_root_cert_path(Some(ca.clone()));
            opts.ssl_opts(ssl)
        }
        None => opts,
    }
}

/// Which server a connection error came from, for [`hint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    Redis,
    Mysql,
}

impl std::fmt::Display for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Server::Redis => "Redis",
            Server::Mysql => "MySQL",
        })
    }
}

/// What a failed connection attempt says about TLS.
#[derive(Debug, PartialEq, Eq)]
pub struct Hint {
    /// A sentence naming what to check.
    pub text: String,
    /// True when retrying cannot help (a certificate or protocol mismatch).
    pub fatal: bool,
}

fn fatal(text: String) -> Option<Hint> {
    Some(Hint { text, fatal: true })
}

fn maybe(text: String) -> Option<Hint> {
    Some(Hint { text, fatal: false })
}

/// Explains `message`, the error of a connection attempt to `server` at
/// `url`, when it is, or may be, about TLS; `None` otherwise.
pub fn hint(server: Server, url: &str, message: &str) -> Option<Hint> {
    let (ca_flag, tls_on, use_tls, use_plain) = match server {
        Server::Redis => (
            "--redis-ca",
            url.starts_with("rediss://"),
            "a rediss:// URL (and --redis-ca for a private CA)",
            "a redis:// URL",
        ),
        Server::Mysql => (
            "--mysql-ca",
            settings().mysql_ca.is_some(),
            "--mysql-ca",
            "no --mysql-ca",
        ),
    };
    let m = message.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if has(&["invalid peer certificate", "certificate verify failed"]) {
        let name = if m.contains("notvalidforname") {
            " (it is not valid for this host name: connect with a name or IP it lists)"
        } else {
            ""
        };
        return fatal(format!(
            "certificate verify failed: the server's TLS certificate is not trusted{name}; check {ca_flag} (it must name the CA that signed the server's certificate)"
        ));
    }
    if has(&["corrupt message", "server does not have this capability"]) {
        return fatal(format!(
            "the server does not speak TLS on this port; use {use_plain}, or enable TLS on the server"
        ));
    }
    if has(&["insecure transport"]) {
        return fatal(format!(
            "the server accepts TLS connections only; use {use_tls}"
        ));
    }
    if tls_on && has(&["(os error 11)", "timed out"]) {
        return maybe(format!(
            "no answer to the TLS handshake: if the server does not speak TLS on this port, use {use_plain}"
        ));
    }
    let closed = [
        "reset by peer",
        "broken pipe",
        "connection closed",
        "eof",
        "(os error 11)",
    ];
    if !tls_on && (has(&closed) || has(&["access denied"])) {
        return maybe(format!(
            "if the server accepts TLS connections only (tls-port, require_secure_transport, REQUIRE SSL), use {use_tls}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint_text(server: Server, url: &str, message: &str) -> (String, bool) {
        let h = hint(server, url, message).expect("a hint");
        (h.text, h.fatal)
    }

    #[test]
    fn certificate_and_protocol_mismatches_are_fatal_and_name_the_flag() {
        let r = "rediss://h:1/";
        let (t, fatal) = hint_text(Server::Redis, r, "invalid peer certificate: UnknownIssuer");
        assert!(
            fatal && t.contains("certificate verify failed") && t.contains("--redis-ca"),
            "{t}"
        );
        let (t, _) = hint_text(
            Server::Mysql,
            "",
            "invalid peer certificate: NotValidForName",
        );
        assert!(t.contains("--mysql-ca") && t.contains("host name"), "{t}");
        let (t, fatal) = hint_text(
            Server::Redis,
            r,
            "received corrupt message of type InvalidContentType",
        );
        assert!(
            fatal && t.contains("does not speak TLS") && t.contains("redis://"),
            "{t}"
        );
        let (t, fatal) = hint_text(
            Server::Mysql,
            "",
            "Client requires secure connection but server does not have this capability",
        );
        assert!(
            fatal && t.contains("does not speak TLS") && t.contains("--mysql-ca"),
            "{t}"
        );
        let (t, fatal) = hint_text(
            Server::Mysql,
            "",
            "ERROR 3159 (08004): Connections using insecure transport are prohibited while --require_secure_transport=ON.",
        );
        assert!(fatal && t.contains("TLS connections only"), "{t}");
    }

    #[test]
    fn ambiguous_failures_get_a_conditional_hint_and_are_retried() {
        let (t, fatal) = hint_text(
            Server::Redis,
            "rediss://h:1/",
            "Resource temporarily unavailable (os error 11)",
        );
        assert!(!fatal && t.contains("redis:// URL"), "{t}");
        let (t, fatal) = hint_text(
            Server::Redis,
            "redis://h:1/",
            "Connection reset by peer (os error 104)",
        );
        assert!(!fatal && t.contains("rediss://"), "{t}");
        let (t, fatal) = hint_text(
            Server::Mysql,
            "",
            "ERROR 1045 (28000): Access denied for user 'root'",
        );
        assert!(!fatal && t.contains("--mysql-ca"), "{t}");
        assert_eq!(
            hint(
                Server::Redis,
                "redis://h:1/",
                "Connection refused (os error 111)"
            ),
            None
        );
        assert_eq!(
            hint(
                Server::Redis,
                "rediss://h:1/",
                "Connection refused (os error 111)"
            ),
            None
        );
    }

    #[test]
    fn cert_and_key_go_together() {
        let args = TlsArgs {
            redis_cert: Some("/nonexistent/cert.pem".into()),
            ..TlsArgs::default()
        };
        let e = redis_certificates(&args).unwrap_err();
        assert!(e.contains("--redis-key"), "{e}");
    }

    #[test]
    fn unreadable_files_are_named() {
        let args = TlsArgs {
            redis_ca: Some("/nonexistent/ca.pem".into()),
            ..TlsArgs::default()
        };
        let e = redis_certificates(&args).unwrap_err();
        assert!(e.contains("--redis-ca /nonexistent/ca.pem"), "{e}");
    }
}

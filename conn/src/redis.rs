//! Redis TLS: the certificate flags (`--redis-ca`, `--redis-cert`,
//! `--redis-key`), read and checked once by [`RedisTls::load`], and the
//! clients built with them.

use std::path::PathBuf;

use clap::Args;
use redis::{ClientTlsConfig, TlsCertificates};

use crate::files::read_file;

/// The Redis certificate flags (global: every subcommand takes them).
#[derive(Args, Debug, Default, Clone)]
pub struct RedisTlsArgs {
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
}

/// The loaded Redis certificates (none: the URL alone, and for TLS the
/// built-in web PKI roots).
#[derive(Default, Clone)]
pub struct RedisTls {
    certs: Option<TlsCertificates>,
}

impl RedisTls {
    /// Reads and checks the files of `args`; `url` is the Redis URL the
    /// program will use, if it has one (certificates need `rediss://`).
    pub fn load(args: &RedisTlsArgs, url: Option<&str>) -> Result<RedisTls, String> {
        let certs = certificates(args)?;
        let url = url.map(check_url).transpose()?;
        if let (Some(certs), Some(url)) = (&certs, url) {
            if !url.starts_with("rediss://") {
                return Err(format!(
                    "--redis-ca/--redis-cert need a rediss:// or rediss+sentinel:// URL (TLS), got {}",
                    scheme_of(&url)
                ));
            }
            redis::Client::build_with_tls(url, certs.clone())
                .map_err(|e| format!("Redis TLS settings: {e}"))?;
        }
        Ok(RedisTls { certs })
    }

    /// A client for `url`, with the certificates for a `rediss://` URL.
    pub fn client(&self, url: &str) -> redis::RedisResult<redis::Client> {
        match (&self.certs, url.starts_with("rediss://")) {
            (Some(certs), true) => redis::Client::build_with_tls(url, certs.clone()),
            _ => redis::Client::open(url),
        }
    }

    /// The certificates for a cluster client, if the flags gave any.
    pub fn certs(&self) -> Option<TlsCertificates> {
        self.certs.clone()
    }
}

/// `url` itself, or for a Sentinel URL (checked here, so a bad one fails
/// at start) the URL of its first sentinel's address as a data node.
fn check_url(url: &str) -> Result<String, String> {
    if !crate::sentinel::is_sentinel_url(url) {
        return Ok(url.to_owned());
    }
    let s = crate::sentinel::SentinelUrl::parse(url)?;
    Ok(s.node_url(&s.sentinels[0]))
}

/// The scheme of `url`, for a message: never the URL itself, which may
/// carry a password.
fn scheme_of(url: &str) -> &str {
    url.split_once("://")
        .map_or("a URL without a scheme", |(s, _)| s)
}

/// The PEM files of the flags, or `None` when none is given.
fn certificates(args: &RedisTlsArgs) -> Result<Option<TlsCertificates>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cert_and_key_go_together() {
        let args = RedisTlsArgs {
            redis_cert: Some("/nonexistent/cert.pem".into()),
            ..RedisTlsArgs::default()
        };
        let e = certificates(&args).unwrap_err();
        assert!(e.contains("--redis-key"), "{e}");
    }

    #[test]
    fn unreadable_files_are_named() {
        let args = RedisTlsArgs {
            redis_ca: Some("/nonexistent/ca.pem".into()),
            ..RedisTlsArgs::default()
        };
        let e = certificates(&args).unwrap_err();
        assert!(e.contains("--redis-ca /nonexistent/ca.pem"), "{e}");
    }

    #[test]
    fn certificates_need_rediss_and_readable_files() {
        let ca = std::env::temp_dir().join(format!("tg-conn-ca-{}.pem", std::process::id()));
        std::fs::write(&ca, "not checked here").unwrap();
        let args = RedisTlsArgs {
            redis_ca: Some(ca.clone()),
            ..RedisTlsArgs::default()
        };
        let none = RedisTls::load(&RedisTlsArgs::default(), Some("redis://h/")).unwrap();
        assert!(none.certs().is_none());
        let err = RedisTls::load(&args, Some("redis://h/")).err().unwrap();
        assert!(
            err.contains("rediss://") && err.contains("got redis"),
            "{err}"
        );
        let no_scheme = RedisTls::load(&args, Some("u:hunter2@h:1")).err().unwrap();
        assert!(
            !no_scheme.contains("hunter2") && no_scheme.contains("without a scheme"),
            "{no_scheme}"
        );
        let sentinel = RedisTls::load(&args, Some("redis+sentinel://h/m"))
            .err()
            .unwrap();
        assert!(sentinel.contains("rediss+sentinel://"), "{sentinel}");
        assert!(RedisTls::load(&args, Some("rediss+sentinel://h,h2/m")).is_ok());
        let bad = RedisTls::load(&RedisTlsArgs::default(), Some("redis+sentinel://h/"));
        assert!(bad.err().unwrap().contains("master name"));
        let loaded = RedisTls::load(&args, Some("rediss://h/"));
        let _ = std::fs::remove_file(&ca);
        let certs = loaded.unwrap().certs().expect("certificates");
        assert!(certs.root_cert.is_some() && certs.client_tls.is_none());
    }
}

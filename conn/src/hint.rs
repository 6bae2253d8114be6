//! What a failed connection attempt says about TLS: [`hint`] turns the
//! error into a sentence that names the flag or URL part to check, and says
//! whether retrying can help. Certificate and protocol mismatches are
//! configuration errors, so a program's startup does not retry them.

/// True when MySQL connections use TLS (`--mysql-ca` installed).
fn mysql_tls_on() -> bool {
    #[cfg(feature = "mysql")]
    return crate::settings::installed().mysql.enabled();
    #[cfg(not(feature = "mysql"))]
    return false;
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
        Server::Mysql => ("--mysql-ca", mysql_tls_on(), "--mysql-ca", "no --mysql-ca"),
    };
    let m = message.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if server == Server::Redis && has(&["monitors a master named", "invalid sentinel url"]) {
        return fatal("the Sentinel URL names no master the sentinels know: fix it (redis+sentinel://host:port,.../<master-name>)".into());
    }
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
    fn a_wrong_master_name_is_fatal() {
        let (t, fatal) = hint_text(
            Server::Redis,
            "redis+sentinel://h:1/nope",
            "no sentinel at h:1 monitors a master named \"nope\" (they monitor: tg)",
        );
        assert!(fatal && t.contains("<master-name>"), "{t}");
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
}

//! The Sentinel URL, parsed in one place (pure):
//! `redis+sentinel://[user:password@]host[:port][,host[:port]...]/<master-name>`,
//! `rediss+sentinel://` for TLS. The credentials are the data nodes' (the
//! master's and the replicas'); the sentinels' own come from
//! `--sentinel-user`/`--sentinel-password` ([`SentinelAuth`]). A port left
//! out is Sentinel's 26379.

use std::fmt;

/// Sentinel's default port.
pub const DEFAULT_PORT: u16 = 26379;

const PLAIN: &str = "redis+sentinel://";
const TLS: &str = "rediss+sentinel://";

/// True when `url` is a Sentinel URL (either scheme), valid or not.
pub fn is_sentinel_url(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with(PLAIN) || lower.starts_with(TLS)
}

/// A `host:port` (IPv6 hosts without brackets).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Addr {
    pub host: String,
    pub port: u16,
}

impl Addr {
    pub fn new(host: impl Into<String>, port: u16) -> Addr {
        Addr {
            host: host.into(),
            port,
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// The sentinels' own ACL user and password (both optional).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SentinelAuth {
    pub user: Option<String>,
    pub password: Option<String>,
}

/// A parsed Sentinel URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentinelUrl {
    /// The sentinels, in the URL's order.
    pub sentinels: Vec<Addr>,
    /// The name the sentinels monitor the master under.
    pub master: String,
    /// `rediss+sentinel://`: TLS to the sentinels and to the data nodes.
    pub tls: bool,
    /// The data nodes' `user:password` exactly as written (percent-encoded).
    userinfo: Option<String>,
}

impl SentinelUrl {
    /// Parses `url`; the error names what is wrong and shows the form.
    pub fn parse(url: &str) -> Result<SentinelUrl, String> {
        let bad = |why: String| {
            Err(format!(
                "invalid Sentinel URL {}: {why} (the form is redis+sentinel://[user:password@]host:port[,host:port...]/<master-name>)",
                redact(url)
            ))
        };
        let url = url.trim();
        let lower = url.to_ascii_lowercase();
        let (tls, rest) = if lower.starts_with(TLS) {
            (true, &url[TLS.len()..])
        } else if lower.starts_with(PLAIN) {
            (false, &url[PLAIN.len()..])
        } else {
            return bad("the scheme must be redis+sentinel:// or rediss+sentinel://".into());
        };
        if rest.contains(['?', '#']) {
            return bad("query parameters and fragments are not supported".into());
        }
        let Some((authority, path)) = rest.split_once('/') else {
            return bad("no /<master-name> after the sentinels".into());
        };
        if path.contains('@') {
            // A `/` in the password cut the URL short: the rest of the
            // password must not be shown as a master name.
            return bad("an @ after the first /: write a / in the password as %2F".into());
        }
        let master = path.strip_suffix('/').unwrap_or(path);
        if master.is_empty() {
            return bad("the master name after the last / is empty".into());
        }
        if master.contains('/') || master.chars().any(char::is_whitespace) {
            return bad(format!("{master:?} is not a master name (one word, no /)"));
        }
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u.to_owned()), h),
            Some((_, h)) => (None, h),
            None => (None, authority),
        };
        let sentinels = match hosts.split(',').map(parse_addr).collect() {
            Ok(s) => s,
            Err(e) => return bad(e),
        };
        let parsed = SentinelUrl {
            sentinels,
            master: master.to_owned(),
            tls,
            userinfo,
        };
        // The data nodes' URLs carry the credentials as written: the
        // `redis` crate must take them (a `%XX` escape that decodes to
        // invalid UTF-8 it refuses), or every connection would fail.
        match redis::Client::open(parsed.node_url(&parsed.sentinels[0])) {
            Ok(_) => Ok(parsed),
            Err(e) => bad(format!("the user or password: {e}")),
        }
    }

    /// The data nodes' user, decoded (`None`: the default user).
    pub fn user(&self) -> Option<String> {
        let (user, _) = self.userinfo.as_deref()?.split_once(':')?;
        (!user.is_empty()).then(|| percent_decode(user))
    }

    /// The data nodes' password, decoded (a userinfo without `:` is a password).
    pub fn password(&self) -> Option<String> {
        let info = self.userinfo.as_deref()?;
        let pw = info.split_once(':').map_or(info, |(_, p)| p);
        (!pw.is_empty()).then(|| percent_decode(pw))
    }

    /// The URL of the data node at `addr`: the scheme (`redis://` or
    /// `rediss://`) and the credentials of this URL.
    pub fn node_url(&self, addr: &Addr) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let auth = match &self.userinfo {
            Some(u) if u.contains(':') => format!("{u}@"),
            Some(pw) => format!(":{pw}@"),
            None => String::new(),
        };
        format!("{scheme}://{auth}{addr}/")
    }

    /// The URL of the sentinel at `addr`, with the sentinels' credentials.
    pub fn sentinel_url(&self, addr: &Addr, auth: &SentinelAuth) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let user = auth.user.as_deref().map(percent_encode).unwrap_or_default();
        let userinfo = match (&auth.user, &auth.password) {
            (_, Some(pw)) => format!("{user}:{}@", percent_encode(pw)),
            (Some(_), None) => format!("{user}@"),
            (None, None) => String::new(),
        };
        format!("{scheme}://{userinfo}{addr}/")
    }

    /// The sentinels as `host:port, ...`, for messages.
    pub fn sentinel_list(&self) -> String {
        let all: Vec<String> = self.sentinels.iter().map(Addr::to_string).collect();
        all.join(", ")
    }
}

impl fmt::Display for SentinelUrl {
    /// The URL with its password replaced by `***`, safe to log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { TLS } else { PLAIN };
        let auth = match self.userinfo.as_deref().map(|u| u.split_once(':')) {
            Some(Some((user, _))) => format!("{user}:***@"),
            Some(None) => "***@".to_owned(),
            None => String::new(),
        };
        let hosts: Vec<String> = self.sentinels.iter().map(Addr::to_string).collect();
        write!(f, "{scheme}{auth}{}/{}", hosts.join(","), self.master)
    }
}

/// `url` with whatever sits between `://` and its last `@` reduced to the
/// user, for error messages about URLs that do not parse. The last `@` of
/// the whole URL, not of its authority: in a URL that does not parse, a
/// `/` in the password would end the authority and show the password's
/// rest (better to hide a host than to show a password).
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.rsplit_once('@') {
        Some((info, after)) => {
            let user = info.split_once(':').map_or("", |(u, _)| u);
            format!("{scheme}://{user}:***@{after}")
        }
        None => url.to_owned(),
    }
}

/// One `host[:port]` or `[v6]:port` of the sentinel list.
fn parse_addr(text: &str) -> Result<Addr, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("an empty sentinel address in the list".into());
    }
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("{text:?}: an IPv6 address needs its closing ]"))?;
        match after {
            "" => (host, None),
            p => (
                host,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| format!("{text:?}: expected :port after ]"))?,
                ),
            ),
        }
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(format!("{text:?} has no host"));
    }
    check_host(text, host, text.starts_with('['))?;
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("{text:?}: the port {p:?} is not a number 1-65535")),
        },
    };
    let addr = Addr::new(host, port);
    opens(text, &addr)?;
    Ok(addr)
}

/// Whether the `redis` crate, which connects to it, takes `addr` (it
/// refuses a wildcard address such as `0.0.0.0`, `0` or `[::]`).
fn opens(text: &str, addr: &Addr) -> Result<(), String> {
    match redis::Client::open(format!("redis://{addr}/")) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{text:?} is not an address to connect to: {e}")),
    }
}

/// A host the sentinels and the data nodes can be reached at: an IPv6
/// address in brackets, or a name or IPv4 address (ASCII letters, digits,
/// `.`, `-`, `_`), so that a bad one fails when the URL is read, not at
/// every connection after it.
fn check_host(text: &str, host: &str, bracketed: bool) -> Result<(), String> {
    if bracketed {
        return match host.parse::<std::net::Ipv6Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!("{text:?}: [{host}] is not an IPv6 address")),
        };
    }
    if host.contains(':') {
        return Err(format!(
            "{text:?}: an IPv6 address goes in brackets ([{host}]:port); a host name has no :"
        ));
    }
    let name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_');
    if host.len() > 253 || !host.bytes().all(name) {
        return Err(format!(
            "{text:?}: the host must be a name or address (letters, digits, . - _, at most 253)"
        ));
    }
    Ok(())
}

/// Decodes `%XX` escapes (an invalid escape stays as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes every byte but RFC 3986's unreserved ones.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn err(url: &str) -> String {
        SentinelUrl::parse(url).unwrap_err()
    }

    #[test]
    fn hosts_master_and_default_port() {
        let u = SentinelUrl::parse("redis+sentinel://s1:26380,s2,10.0.0.3:5000/mymaster").unwrap();
        assert_eq!(
            u.sentinels,
            [
                Addr::new("s1", 26380),
                Addr::new("s2", 26379),
                Addr::new("10.0.0.3", 5000)
            ]
        );
        assert_eq!(u.master, "mymaster");
        assert!(!u.tls);
        assert_eq!((u.user(), u.password()), (None, None));
        assert_eq!(
            u.node_url(&Addr::new("10.0.0.9", 6379)),
            "redis://10.0.0.9:6379/"
        );
        assert_eq!(
            u.to_string(),
            "redis+sentinel://s1:26380,s2:26379,10.0.0.3:5000/mymaster"
        );
        // A trailing slash is forgiven.
        assert_eq!(
            SentinelUrl::parse("redis+sentinel://h/m/").unwrap().master,
            "m"
        );
    }

    #[test]
    fn tls_ipv6_and_credentials() {
        let u =
            SentinelUrl::parse("rediss+sentinel://app:p%40ss@[::1]:26379,[fe80::2]/tg").unwrap();
        assert!(u.tls);
        assert_eq!(
            u.sentinels,
            [Addr::new("::1", 26379), Addr::new("fe80::2", 26379)]
        );
        assert_eq!(u.user().as_deref(), Some("app"));
        assert_eq!(u.password().as_deref(), Some("p@ss"));
        assert_eq!(
            u.node_url(&Addr::new("::1", 7000)),
            "rediss://app:p%40ss@[::1]:7000/"
        );
        assert_eq!(
            u.to_string(),
            "rediss+sentinel://app:***@[::1]:26379,[fe80::2]:26379/tg"
        );
        let pw_only = SentinelUrl::parse("REDIS+SENTINEL://:secret@h:1/m").unwrap();
        assert_eq!(
            (pw_only.user(), pw_only.password().as_deref()),
            (None, Some("secret"))
        );
        assert_eq!(pw_only.node_url(&Addr::new("n", 2)), "redis://:secret@n:2/");
    }

    #[test]
    fn sentinel_credentials_are_separate_and_encoded() {
        let u = SentinelUrl::parse("redis+sentinel://app:pw@h:1/m").unwrap();
        let a = Addr::new("h", 1);
        assert_eq!(u.sentinel_url(&a, &SentinelAuth::default()), "redis://h:1/");
        let auth = SentinelAuth {
            user: Some("sen tinel".into()),
            password: Some("a:b@c".into()),
        };
        assert_eq!(
            u.sentinel_url(&a, &auth),
            "redis://sen%20tinel:a%3Ab%40c@h:1/"
        );
        let pw = SentinelAuth {
            user: None,
            password: Some("x".into()),
        };
        assert_eq!(u.sentinel_url(&a, &pw), "redis://:x@h:1/");
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        assert!(
            err("redis://h:1/m").contains("scheme"),
            "{}",
            err("redis://h:1/m")
        );
        assert!(err("redis+sentinel://h:1").contains("no /<master-name>"));
        assert!(err("redis+sentinel://h:1/").contains("master name"));
        assert!(err("redis+sentinel://h:1/a/b").contains("not a master name"));
        assert!(err("redis+sentinel://h:1,,h2/m").contains("empty sentinel address"));
        assert!(err("redis+sentinel://h:0/m").contains("1-65535"));
        assert!(err("redis+sentinel://h:x/m").contains("\"x\""));
        assert!(err("redis+sentinel://:1/m").contains("no host"));
        assert!(err("redis+sentinel://[::1/m").contains("closing ]"));
        assert!(err("redis+sentinel://h/m?db=1").contains("query"));
        // The password never shows in an error.
        let e = err("redis+sentinel://u:hunter2@h:99999/m");
        assert!(!e.contains("hunter2") && e.contains("u:***@"), "{e}");
    }

    /// Found by the `sentinel_url` fuzz target: a `/` in an unencoded
    /// password ended the authority, and the error showed the password.
    #[test]
    fn a_slash_in_the_password_never_shows() {
        for url in [
            "redis+sentinel://u:pa/ss@h/m",
            "redis+sentinel://u:pa/ss@h:1",
        ] {
            let e = err(url);
            assert!(!e.contains("pa/ss") && !e.contains("ss@"), "{e}");
        }
        assert!(err("redis+sentinel://u:pa/ss@h/m").contains("%2F"));
    }

    /// Found by the `sentinel_url` fuzz target: hosts and passwords the
    /// `redis` crate cannot open (a space, a stray bracket, a wildcard
    /// address, `%ec` that decodes to invalid UTF-8) parsed, to fail at
    /// every connection instead; an address that shows as `[a]b:c]:5` did
    /// not parse back.
    #[test]
    fn hosts_are_names_or_bracketed_ipv6_addresses() {
        for (url, want) in [
            ("redis+sentinel://bad host:1/m", "name or address"),
            ("redis+sentinel://a]b:c:5/m", "brackets"),
            ("redis+sentinel://fe80::1:26379/m", "brackets"),
            ("redis+sentinel://[::g]:1/m", "not an IPv6 address"),
            ("redis+sentinel://\u{100}:1/m", "name or address"),
            ("redis+sentinel://[::0]:1/m", "not an address to connect to"),
            (
                "redis+sentinel://:s%ecret@h:1/m",
                "password: Password is not valid UTF-8",
            ),
        ] {
            assert!(err(url).contains(want), "{url}: {}", err(url));
        }
        let ok = SentinelUrl::parse("redis+sentinel://h_1.example-2:1,[fe80::2]/m").unwrap();
        assert_eq!(
            ok.sentinels,
            [Addr::new("h_1.example-2", 1), Addr::new("fe80::2", 26379)]
        );
    }

    #[test]
    fn recognises_the_schemes() {
        assert!(is_sentinel_url("redis+sentinel://h/m"));
        assert!(is_sentinel_url("  Rediss+Sentinel://h/m"));
        assert!(!is_sentinel_url("redis://h:1/"));
        assert!(!is_sentinel_url("rediss://h:1/"));
    }

    proptest! {
        /// Whatever the text, parsing never panics, and a URL built from
        /// parts parses back to them.
        #[test]
        fn never_panics(s in ".{0,60}") {
            let _ = SentinelUrl::parse(&s);
            let _ = SentinelUrl::parse(&format!("redis+sentinel://{s}"));
        }

        #[test]
        fn round_trips(
            hosts in proptest::collection::vec(("[a-z][a-z0-9.-]{0,10}", 1u16..), 1..4),
            master in "[A-Za-z0-9_.-]{1,12}",
            tls: bool,
        ) {
            let list: Vec<String> = hosts.iter().map(|(h, p)| format!("{h}:{p}")).collect();
            let scheme = if tls { "rediss+sentinel" } else { "redis+sentinel" };
            let u = SentinelUrl::parse(&format!("{scheme}://{}/{master}", list.join(","))).unwrap();
            prop_assert_eq!(u.tls, tls);
            prop_assert_eq!(&u.master, &master);
            let want: Vec<Addr> = hosts.iter().map(|(h, p)| Addr::new(h.clone(), *p)).collect();
            prop_assert_eq!(&u.sentinels, &want);
            prop_assert_eq!(SentinelUrl::parse(&u.to_string()).unwrap(), u);
        }

        #[test]
        fn credentials_round_trip(user in "[ -~]{1,12}", pw in "[ -~]{1,12}") {
            prop_assert_eq!(percent_decode(&percent_encode(&user)), user);
            let url = format!("redis+sentinel://{}:{}@h/m", percent_encode("u"), percent_encode(&pw));
            prop_assert_eq!(SentinelUrl::parse(&url).unwrap().password(), Some(pw));
        }
    }
}

//! A minimal RESP2 client for load generation: pre-encoded commands written
//! straight to a `TcpStream`, replies parsed in place. Much cheaper per
//! command than a general client, so on a 2-core machine more of the CPU goes
//! to the server being measured (the same client drives every path).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

/// Where and how to connect (parsed from a `redis://` URL).
#[derive(Clone, Debug)]
pub struct RedisAddr {
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<String>,
    pub db: i64,
}

impl RedisAddr {
    pub fn from_url(url: &str) -> Result<RedisAddr> {
        use redis::IntoConnectionInfo;
        let info = url
            .into_connection_info()
            .with_context(|| format!("invalid Redis URL {url:?}"))?;
        let (host, port) = match info.addr() {
            redis::ConnectionAddr::Tcp(h, p) => (h.clone(), *p),
            other => bail!("the load generator needs a plain TCP Redis URL, got {other:?}"),
        };
        let r = info.redis_settings();
        Ok(RedisAddr {
            host,
            port,
            username: r.username().map(str::to_string),
            password: r.password().map(str::to_string),
            db: r.db(),
        })
    }
}

/// A parsed reply. Bulk strings that look like integers become `Int`.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Int(i64),
    Str(Vec<u8>),
    Nil,
    /// A simple string (`+OK`).
    Simple(String),
    Error(String),
    Array(Vec<Reply>),
}

impl Reply {
    /// The ticket number of a claim reply: an integer, or the first element
    /// of a `ZPOPMIN` reply. `Ok(None)` for nil / an empty array.
    pub fn ticket(&self) -> Result<Option<i64>, String> {
        match self {
            Reply::Int(n) => Ok(Some(*n)),
            Reply::Nil => Ok(None),
            Reply::Array(a) if a.is_empty() => Ok(None),
            Reply::Array(a) => a[0].ticket(),
            Reply::Error(e) => Err(e.clone()),
            other => Err(format!("unexpected reply {other:?}")),
        }
    }
}

/// Appends one RESP command (array of bulk strings) to `buf`.
pub fn encode(buf: &mut Vec<u8>, args: &[&[u8]]) {
    buf.push(b'*');
    push_int(buf, args.len() as i64);
    buf.extend_from_slice(b"\r\n");
    for a in args {
        buf.push(b'$');
        push_int(buf, a.len() as i64);
        buf.extend_from_slice(b"\r\n");
        buf.extend_from_slice(a);
        buf.extend_from_slice(b"\r\n");
    }
}

fn push_int(buf: &mut Vec<u8>, n: i64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let neg = n < 0;
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if neg {
        buf.push(b'-');
    }
    buf.extend_from_slice(&tmp[i..]);
}

fn parse_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(if neg { -v } else { v })
}

/// Parses one reply from the front of `buf`: `Ok(Some((reply, bytes used)))`,
/// `Ok(None)` if incomplete.
pub fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>> {
    let Some(nl) = buf.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    if nl == 0 {
        bail!("protocol error: empty line");
    }
    let line = &buf[1..nl];
    let after = nl + 2;
    let text = || String::from_utf8_lossy(line).into_owned();
    match buf[0] {
        b':' => {
            let n = parse_int(line).ok_or_else(|| anyhow!("bad integer reply {:?}", text()))?;
            Ok(Some((Reply::Int(n), after)))
        }
        b'+' => Ok(Some((Reply::Simple(text()), after))),
        b'-' => Ok(Some((Reply::Error(text()), after))),
        b'$' => {
            let len = parse_int(line).ok_or_else(|| anyhow!("bad bulk length {:?}", text()))?;
            if len < 0 {
                return Ok(Some((Reply::Nil, after)));
            }
            let end = after + len as usize;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            let data = &buf[after..end];
            let reply = match parse_int(data) {
                Some(n) => Reply::Int(n),
                None => Reply::Str(data.to_vec()),
            };
            Ok(Some((reply, end + 2)))
        }
        b'*' => {
            let n = parse_int(line).ok_or_else(|| anyhow!("bad array length {:?}", text()))?;
            if n < 0 {
                return Ok(Some((Reply::Nil, after)));
            }
            let mut items = Vec::with_capacity(n as usize);
            let mut pos = after;
            for _ in 0..n {
                match parse(&buf[pos..])? {
                    Some((r, used)) => {
                        items.push(r);
                        pos += used;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some((Reply::Array(items), pos)))
        }
        other => bail!("protocol error: unexpected reply type byte {other:#x}"),
    }
}

/// One connection with a read buffer.
pub struct RawConn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl RawConn {
    /// Connects, authenticates and selects the database of `addr`.
    pub fn connect(addr: &RedisAddr) -> Result<RawConn> {
        let stream = TcpStream::connect((addr.host.as_str(), addr.port))
            .with_context(|| format!("connect to Redis at {}:{}", addr.host, addr.port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut c = RawConn {
            stream,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
        };
        if let Some(pw) = &addr.password {
            let mut cmd = Vec::new();
            match &addr.username {
                Some(u) => encode(&mut cmd, &[b"AUTH", u.as_bytes(), pw.as_bytes()]),
                None => encode(&mut cmd, &[b"AUTH", pw.as_bytes()]),
            }
            c.expect_ok(&cmd, "AUTH")?;
        }
        if addr.db != 0 {
            let mut cmd = Vec::new();
            encode(&mut cmd, &[b"SELECT", addr.db.to_string().as_bytes()]);
            c.expect_ok(&cmd, "SELECT")?;
        }
        Ok(c)
    }

    fn expect_ok(&mut self, cmd: &[u8], what: &str) -> Result<()> {
        self.send(cmd)?;
        match self.read_reply()? {
            Reply::Simple(_) => Ok(()),
            other => bail!("{what} failed: {other:?}"),
        }
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream
            .write_all(bytes)
            .context("write to Redis connection")
    }

    /// A reply already in the buffer, without reading from the socket.
    pub fn try_reply(&mut self) -> Result<Option<Reply>> {
        if self.start == self.end {
            return Ok(None);
        }
        match parse(&self.buf[self.start..self.end])? {
            Some((r, used)) => {
                self.start += used;
                if self.start == self.end {
                    self.start = 0;
                    self.end = 0;
                }
                Ok(Some(r))
            }
            None => Ok(None),
        }
    }

    /// One `read(2)` into the buffer (blocks if nothing is available).
    pub fn fill(&mut self) -> Result<()> {
        if self.start > 0 && self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let n = self.buf.len();
            self.buf.resize(n * 2, 0);
        }
        let n = self
            .stream
            .read(&mut self.buf[self.end..])
            .context("read from Redis connection")?;
        if n == 0 {
            bail!("Redis closed the connection");
        }
        self.end += n;
        Ok(())
    }

    /// The next reply, reading as needed.
    pub fn read_reply(&mut self) -> Result<Reply> {
        loop {
            if let Some(r) = self.try_reply()? {
                return Ok(r);
            }
            self.fill()?;
        }
    }
}

/// Waits until at least one of `fds` is readable (or `timeout_ms` passes);
/// returns the indexes of the readable ones.
pub fn poll_readable(fds: &[RawFd], timeout_ms: i32) -> Result<Vec<usize>> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `pfds` is a valid, exclusively borrowed array of `pfds.len()` pollfd structs.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
    if rc < 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            return Ok(Vec::new());
        }
        return Err(err).context("poll");
    }
    Ok(pfds
        .iter()
        .enumerate()
        .filter(|(_, p)| p.revents != 0)
        .map(|(i, _)| i)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_commands() {
        let mut b = Vec::new();
        encode(&mut b, &[b"TICKET.CLAIM", b"e1", b"u-10"]);
        assert_eq!(
            b,
            b"*3\r\n$12\r\nTICKET.CLAIM\r\n$2\r\ne1\r\n$4\r\nu-10\r\n"
        );
        let mut b = Vec::new();
        push_int(&mut b, -1234);
        push_int(&mut b, 0);
        assert_eq!(b, b"-12340");
    }

    #[test]
    fn parses_each_reply_type() {
        assert_eq!(parse(b":42\r\n").unwrap(), Some((Reply::Int(42), 5)));
        assert_eq!(parse(b"$-1\r\n").unwrap(), Some((Reply::Nil, 5)));
        assert_eq!(parse(b"$2\r\n17\r\n").unwrap(), Some((Reply::Int(17), 8)));
        assert_eq!(
            parse(b"$3\r\nabc\r\n").unwrap(),
            Some((Reply::Str(b"abc".to_vec()), 9))
        );
        assert_eq!(
            parse(b"-SOLDOUT event 'e' is sold out\r\n").unwrap(),
            Some((Reply::Error("SOLDOUT event 'e' is sold out".into()), 32))
        );
        assert_eq!(
            parse(b"+OK\r\n").unwrap(),
            Some((Reply::Simple("OK".into()), 5))
        );
        let (r, used) = parse(b"*2\r\n$1\r\n7\r\n$1\r\n7\r\n:1\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(used, 18);
        assert_eq!(r.ticket(), Ok(Some(7)));
        assert_eq!(parse(b"*0\r\n").unwrap().unwrap().0.ticket(), Ok(None));
    }

    #[test]
    fn incomplete_replies_wait_for_more() {
        assert_eq!(parse(b":4").unwrap(), None);
        assert_eq!(parse(b"$5\r\nab").unwrap(), None);
        assert_eq!(parse(b"*2\r\n:1\r\n").unwrap(), None);
        assert!(parse(b"?x\r\n").is_err());
        assert!(parse(b":x\r\n").is_err());
    }

    #[test]
    fn ticket_of_error_is_err() {
        assert!(Reply::Error("SOLDOUT".into()).ticket().is_err());
        assert!(Reply::Simple("OK".into()).ticket().is_err());
    }
}

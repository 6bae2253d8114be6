//! The Lua baseline: the coupon gate's script, extended to the same claim
//! semantics as `TICKET.CLAIM` minus the open/close checks — holder check
//! (`HGET`), `ZPOPMIN` on a pre-filled pool, `HSET`, `XADD` to a log.
//! Its keys live under `tgbench:{E}:*`, a different prefix and hash tag
//! from the module's `ticket:{E}:*`, so the sidecar never drains them.

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;

use crate::resp::{encode, RawConn, RedisAddr, Reply};

pub const SCRIPT: &str = r#"
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then return tonumber(held) end
local popped = redis.call('ZPOPMIN', KEYS[2])
if #popped == 0 then return redis.error_reply('SOLDOUT event is sold out') end
local n = tonumber(popped[1])
redis.call('HSET', KEYS[1], ARGV[1], n)
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XADD', KEYS[3], '*', 'op', 'claim', 'event', ARGV[2], 'user', ARGV[1], 'ticket', n, 'at', ms)
return n
"#;

/// Keys of one Lua event: holders, pool, log.
pub struct LuaKeys {
    pub event: String,
    pub holders: String,
    pub pool: String,
    pub log: String,
}

impl LuaKeys {
    pub fn new(event: &str) -> LuaKeys {
        LuaKeys {
            event: event.to_string(),
            holders: format!("tgbench:{{{event}}}:holders"),
            pool: format!("tgbench:{{{event}}}:pool"),
            log: format!("tgbench:{{{event}}}:log"),
        }
    }

    /// Appends the `EVALSHA` claim of `user` to `buf`.
    pub fn encode_claim(&self, buf: &mut Vec<u8>, sha: &str, user: &[u8]) {
        encode(
            buf,
            &[
                b"EVALSHA",
                sha.as_bytes(),
                b"3",
                self.holders.as_bytes(),
                self.pool.as_bytes(),
                self.log.as_bytes(),
                user,
                self.event.as_bytes(),
            ],
        );
    }

    pub fn delete(&self, c: &mut RawConn) -> Result<()> {
        let mut cmd = Vec::new();
        encode(
            &mut cmd,
            &[
                b"UNLINK",
                self.holders.as_bytes(),
                self.pool.as_bytes(),
                self.log.as_bytes(),
            ],
        );
        c.send(&cmd)?;
        c.read_reply()?;
        Ok(())
    }
}

/// `SCRIPT LOAD`; returns the sha1.
pub fn load(addr: &RedisAddr) -> Result<String> {
    let mut c = RawConn::connect(addr)?;
    let mut cmd = Vec::new();
    encode(&mut cmd, &[b"SCRIPT", b"LOAD", SCRIPT.as_bytes()]);
    c.send(&cmd)?;
    match c.read_reply()? {
        Reply::Str(s) => Ok(String::from_utf8_lossy(&s).into_owned()),
        other => bail!("SCRIPT LOAD failed: {other:?}"),
    }
}

/// Fills the ZSet `key` with members 1..=n (member = score = number), in
/// `ZADD` batches of 10,000, a few batches in flight.
pub fn fill_pool(c: &mut RawConn, key: &str, n: u64, progress: &ProgressBar) -> Result<()> {
    const BATCH: u64 = 10_000;
    const IN_FLIGHT: usize = 4;
    let mut next = 1u64;
    let mut pending = 0usize;
    let mut buf = Vec::new();
    let mut nums: Vec<Vec<u8>> = Vec::with_capacity(BATCH as usize);
    while next <= n || pending > 0 {
        while next <= n && pending < IN_FLIGHT {
            let to = (next + BATCH - 1).min(n);
            nums.clear();
            for k in next..=to {
                nums.push(k.to_string().into_bytes());
            }
            let mut args: Vec<&[u8]> = Vec::with_capacity(2 + 2 * nums.len());
            args.push(b"ZADD");
            args.push(key.as_bytes());
            for s in &nums {
                args.push(s);
                args.push(s);
            }
            buf.clear();
            encode(&mut buf, &args);
            c.send(&buf).context("ZADD batch")?;
            pending += 1;
            progress.inc(to - next + 1);
            next = to + 1;
        }
        if let Reply::Error(e) = c.read_reply()? {
            bail!("ZADD {key}: {e}");
        }
        pending -= 1;
    }
    Ok(())
}

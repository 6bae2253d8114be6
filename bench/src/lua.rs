//! The Lua baseline: the coupon gate's script, extended to the same claim
//! semantics as `TICKET.CLAIM` minus the open/close checks — holder check
//! (`HGET`), `ZPOPMIN` on a pre-filled pool, `HSET`, `XADD` to a log.
//! Its keys live under `tgbench:{E}:*`, a different prefix and hash tag
//! from the module's `ticket:{E}:*`, so the sidecar never drains them.
//!
//! Checkout on the Lua path ([`HOLD_SCRIPT`], [`CONFIRM_SCRIPT`],
//! [`SWEEP_SCRIPT`]) is what a Lua user has to build for holds: the claim
//! also records the holder's deadline in a `holds` ZSet, a confirm script
//! removes it, and a sweep the client runs periodically releases expired
//! holds. All three log in the module's record format (`op hold ... until`,
//! `op confirm`, `op expire`), so one decoder reads both logs.

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;

use crate::resp::{encode, RawConn, RedisAddr, Reply};

/// The start of both claim scripts: the holder check (a repeat claim gets
/// the same ticket), then the lowest free number, or `SOLDOUT`.
macro_rules! claim_head {
    () => {
        r#"
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then return tonumber(held) end
local popped = redis.call('ZPOPMIN', KEYS[2])
if #popped == 0 then return redis.error_reply('SOLDOUT event is sold out') end
local n = tonumber(popped[1])
"#
    };
}

pub const SCRIPT: &str = concat!(
    claim_head!(),
    r#"redis.call('HSET', KEYS[1], ARGV[1], n)
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XADD', KEYS[3], '*', 'op', 'claim', 'event', ARGV[2], 'user', ARGV[1], 'ticket', n, 'at', ms)
return n
"#
);

/// The claim with a hold: as [`SCRIPT`], plus the deadline (now + ARGV[3]
/// ms) in the holds ZSet (KEYS[3]) and `op hold ... until` in the log.
pub const HOLD_SCRIPT: &str = concat!(
    claim_head!(),
    r#"local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = ms + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], n)
redis.call('ZADD', KEYS[3], deadline, ARGV[1])
redis.call('XADD', KEYS[4], '*', 'op', 'hold', 'event', ARGV[2], 'user', ARGV[1], 'ticket', n, 'until', deadline, 'at', ms)
return n
"#
);

/// Confirms the user's hold unless its deadline has passed (swept or not):
/// replies 1 (tickets held), or `NOHOLD`.
pub const CONFIRM_SCRIPT: &str = r#"
local n = redis.call('HGET', KEYS[1], ARGV[1])
if not n then return redis.error_reply('NOHOLD user holds no tickets') end
local deadline = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not deadline then return 1 end
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(deadline) <= ms then return redis.error_reply('NOHOLD the hold expired') end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('XADD', KEYS[4], '*', 'op', 'confirm', 'event', ARGV[2], 'user', ARGV[1], 'ticket', n, 'at', ms)
return 1
"#;

/// Releases at most ARGV[2] holds whose deadline has passed: the number
/// back to the pool, the holder gone, `op expire` logged. Replies how many.
pub const SWEEP_SCRIPT: &str = r#"
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ms, 'LIMIT', 0, tonumber(ARGV[2]))
for _, user in ipairs(due) do
  local n = redis.call('HGET', KEYS[1], user)
  redis.call('ZREM', KEYS[3], user)
  if n then
    redis.call('HDEL', KEYS[1], user)
    redis.call('ZADD', KEYS[2], n, n)
    redis.call('XADD', KEYS[4], '*', 'op', 'expire', 'event', ARGV[1], 'user', user, 'ticket', n, 'at', ms)
  end
end
return #due
"#;

/// Keys of one Lua event: holders, pool, holds (checkout only), log.
pub struct LuaKeys {
    pub event: String,
    pub holders: String,
    pub pool: String,
    pub holds: String,
    pub log: String,
}

impl LuaKeys {
    pub fn new(event: &str) -> LuaKeys {
        LuaKeys {
            event: event.to_string(),
            holders: format!("tgbench:{{{event}}}:holders"),
            pool: format!("tgbench:{{{event}}}:pool"),
            holds: format!("tgbench:{{{event}}}:holds"),
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

    /// Appends `EVALSHA sha 4 holders pool holds log <args>` to `buf` (the
    /// checkout scripts).
    pub fn encode_checkout(&self, buf: &mut Vec<u8>, sha: &str, args: &[&[u8]]) {
        let mut all: Vec<&[u8]> = vec![
            b"EVALSHA",
            sha.as_bytes(),
            b"4",
            self.holders.as_bytes(),
            self.pool.as_bytes(),
            self.holds.as_bytes(),
            self.log.as_bytes(),
        ];
        all.extend_from_slice(args);
        encode(buf, &all);
    }

    pub fn delete(&self, c: &mut RawConn) -> Result<()> {
        let mut cmd = Vec::new();
        encode(
            &mut cmd,
            &[
                b"UNLINK",
                self.holders.as_bytes(),
                self.pool.as_bytes(),
                self.holds.as_bytes(),
                self.log.as_bytes(),
            ],
        );
        c.send(&cmd)?;
        c.read_reply()?;
        Ok(())
    }
}

/// `SCRIPT LOAD` of the claim script; returns the sha1.
pub fn load(addr: &RedisAddr) -> Result<String> {
    load_script(addr, SCRIPT)
}

/// `SCRIPT LOAD` of `script`; returns the sha1.
pub fn load_script(addr: &RedisAddr, script: &str) -> Result<String> {
    let mut c = RawConn::connect(addr)?;
    let mut cmd = Vec::new();
    encode(&mut cmd, &[b"SCRIPT", b"LOAD", script.as_bytes()]);
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

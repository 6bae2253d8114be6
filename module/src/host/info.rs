//! The `INFO ticket` section: the counters of `stats`, written out under
//! the panic guard like every other entry point from Redis.

use redis_module::{InfoContext, RedisResult};
use redis_module_macros::info_command_handler;

use crate::stats;

#[info_command_handler]
fn ticket_info(ctx: &InfoContext, _for_crash_report: bool) -> RedisResult<()> {
    let written = super::panic::guard(std::ptr::null_mut(), "INFO ticket", || {
        crate::fault::point(crate::fault::Point::Info);
        let mut section = ctx.builder().add_section("stats");
        for (name, counter) in stats::FIELDS {
            section = section.field(name, counter.get() as i64)?;
        }
        section.build_section()?.build_info()?;
        Ok(())
    });
    written.unwrap_or(Ok(()))
}

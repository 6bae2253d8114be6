//! MySQL TLS: `--mysql-ca`, checked once by [`MysqlTls::load`], and the
//! connection options that use it.

use std::path::PathBuf;

use clap::Args;

use crate::files::read_file;

/// The MySQL certificate flag (global: every subcommand takes it).
#[derive(Args, Debug, Default, Clone)]
pub struct MysqlTlsArgs {
    /// CA certificate (PEM) of the MySQL server: connect over TLS and verify it
    #[arg(long, global = true, env = "TICKETGATE_MYSQL_CA", value_name = "FILE")]
    pub mysql_ca: Option<PathBuf>,
}

/// The loaded MySQL TLS setting.
#[derive(Default, Clone)]
pub struct MysqlTls {
    ca: Option<PathBuf>,
}

impl MysqlTls {
    /// Checks that the CA file of `args` can be read.
    pub fn load(args: &MysqlTlsArgs) -> Result<MysqlTls, String> {
        if let Some(ca) = &args.mysql_ca {
            read_file(ca, "--mysql-ca")?;
        }
        Ok(MysqlTls {
            ca: args.mysql_ca.clone(),
        })
    }

    /// True when connections use TLS (`--mysql-ca` given).
    pub fn enabled(&self) -> bool {
        self.ca.is_some()
    }

    /// `opts` with TLS switched on and verified against `--mysql-ca`, when
    /// given (TLS options of the URL itself, such as a client certificate,
    /// are kept).
    pub fn opts(&self, opts: mysql::OptsBuilder, url_opts: &mysql::Opts) -> mysql::OptsBuilder {
        match &self.ca {
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
}

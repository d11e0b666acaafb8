//! `policy-runner serve`: the subset of policy-server 1.35's flags the
//! runner honours (crates/policy-server/src/cli.rs), with the same names,
//! environment variables and defaults, so a test bed can start either
//! binary with one command line.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;
use clap::builder::BoolishValueParser;

/// `policy-runner serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// YAML file holding the policies to load.
    #[arg(
        long,
        value_name = "POLICIES_FILE",
        env = "KUBEWARDEN_POLICIES",
        default_value = "policies.yml"
    )]
    pub policies: PathBuf,

    /// Bind against ADDRESS (the webhook and the readiness probe).
    #[arg(
        long,
        value_name = "BIND_ADDRESS",
        env = "KUBEWARDEN_BIND_ADDRESS",
        default_value = "0.0.0.0"
    )]
    pub addr: IpAddr,

    /// Listen on PORT.
    #[arg(
        long,
        value_name = "PORT",
        env = "KUBEWARDEN_PORT",
        default_value_t = 3000
    )]
    pub port: u16,

    /// Expose `GET /readiness` (plain HTTP) on READINESS_PROBE_PORT.
    #[arg(
        long,
        value_name = "READINESS_PROBE_PORT",
        env = "KUBEWARDEN_READINESS_PROBE_PORT",
        default_value_t = 8081
    )]
    pub readiness_probe_port: u16,

    /// Path to an X.509 certificate file for HTTPS (exactly one
    /// certificate); with `--key-file`.
    #[arg(long, value_name = "CERT_FILE", env = "KUBEWARDEN_CERT_FILE")]
    pub cert_file: Option<PathBuf>,

    /// Path to an X.509 private key file for HTTPS (exactly one key); with
    /// `--cert-file`.
    #[arg(long, value_name = "KEY_FILE", env = "KUBEWARDEN_KEY_FILE")]
    pub key_file: Option<PathBuf>,

    /// Interrupt policy evaluation after the given time (a policy's
    /// `timeoutEvalSeconds` overrides it).
    #[arg(
        long,
        value_name = "MAXIMUM_EXECUTION_TIME_SECONDS",
        env = "KUBEWARDEN_POLICY_TIMEOUT",
        default_value_t = 2
    )]
    pub policy_timeout: u64,

    /// Disable policy timeout protection.
    #[arg(long, env = "KUBEWARDEN_DISABLE_TIMEOUT_PROTECTION", value_parser = BoolishValueParser::new())]
    pub disable_timeout_protection: bool,

    /// Start even when no Kubernetes configuration can be inferred; the
    /// policies' look-ups then fail.
    #[arg(long, env = "KUBEWARDEN_IGNORE_KUBERNETES_CONNECTION_FAILURE", value_parser = BoolishValueParser::new())]
    pub ignore_kubernetes_connection_failure: bool,

    /// Accepted for policy-server's command line and ignored (only
    /// `file://` modules, nothing is downloaded).
    #[arg(long, value_name = "DIR", env = "KUBEWARDEN_POLICIES_DOWNLOAD_DIR")]
    pub policies_download_dir: Option<PathBuf>,

    /// Accepted for policy-server's command line and ignored (no sigstore).
    #[arg(long, value_name = "DIR", env = "KUBEWARDEN_SIGSTORE_CACHE_DIR")]
    pub sigstore_cache_dir: Option<PathBuf>,

    /// Accepted for policy-server's command line and ignored (one line
    /// per request and the errors go to stderr).
    #[arg(long, value_name = "LOG_LEVEL", env = "KUBEWARDEN_LOG_LEVEL")]
    pub log_level: Option<String>,
}

impl ServeArgs {
    /// The global policy timeout in seconds, if protection is on.
    pub fn timeout(&self) -> Option<u64> {
        (!self.disable_timeout_protection).then_some(self.policy_timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::{CommandFactory, Parser};

    fn serve(args: &[&str]) -> ServeArgs {
        let argv = ["policy-runner", "serve"]
            .into_iter()
            .chain(args.iter().copied());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Serve(serve) => serve,
            other => panic!("expected serve, got {other:?}"),
        }
    }

    #[test]
    fn defaults_are_policy_servers() {
        let args = serve(&[]);
        assert_eq!(args.policies, PathBuf::from("policies.yml"));
        assert_eq!(args.addr.to_string(), "0.0.0.0");
        assert_eq!((args.port, args.readiness_probe_port), (3000, 8081));
        assert_eq!((args.cert_file, args.key_file), (None, None));
        assert_eq!(args.policy_timeout, 2);
        assert!(!args.ignore_kubernetes_connection_failure);
    }

    #[test]
    fn every_flag_parses_and_the_timeout_can_be_disabled() {
        let args = serve(&[
            "--policies",
            "p.yml",
            "--addr",
            "127.0.0.1",
            "--port",
            "3443",
            "--readiness-probe-port",
            "3081",
            "--cert-file",
            "c.crt",
            "--key-file",
            "c.key",
            "--policy-timeout",
            "5",
            "--ignore-kubernetes-connection-failure",
            "--policies-download-dir",
            "store",
            "--sigstore-cache-dir",
            "sigstore",
            "--log-level",
            "info",
        ]);
        assert_eq!(args.addr.to_string(), "127.0.0.1");
        assert_eq!((args.port, args.readiness_probe_port), (3443, 3081));
        assert_eq!(args.cert_file, Some(PathBuf::from("c.crt")));
        assert_eq!(args.timeout(), Some(5));
        assert!(args.ignore_kubernetes_connection_failure);
        assert_eq!(serve(&["--disable-timeout-protection"]).timeout(), None);
    }

    #[test]
    fn flags_read_policy_servers_environment_variables() {
        let command = Cli::command();
        let serve = command.find_subcommand("serve").unwrap();
        let env = |id: &str| {
            let arg = serve.get_arguments().find(|a| a.get_id() == id).unwrap();
            arg.get_env().unwrap().to_str().unwrap().to_owned()
        };
        assert_eq!(env("policies"), "KUBEWARDEN_POLICIES");
        assert_eq!(env("addr"), "KUBEWARDEN_BIND_ADDRESS");
        assert_eq!(env("port"), "KUBEWARDEN_PORT");
        assert_eq!(
            env("readiness_probe_port"),
            "KUBEWARDEN_READINESS_PROBE_PORT"
        );
        assert_eq!(env("cert_file"), "KUBEWARDEN_CERT_FILE");
        assert_eq!(env("key_file"), "KUBEWARDEN_KEY_FILE");
        assert_eq!(env("policy_timeout"), "KUBEWARDEN_POLICY_TIMEOUT");
    }
}
